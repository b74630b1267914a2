-- wrk script: sends pre-signed requests (quick sessions, and refunds in the refund mix), each once, read from REQUESTS_FILE.
-- Each line: timestamp <TAB> signature <TAB> Idempotency-Key (- for none) <TAB> path <TAB> body (every request is a POST). Thread n takes lines n, n+T, n+2T, ...
local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  lines = {}
  local index = 0
  for line in io.lines(os.getenv("REQUESTS_FILE")) do
    if index % tonumber(os.getenv("WRK_THREADS")) == id then
      table.insert(lines, line)
    end
    index = index + 1
  end
  position = 0
end

function request()
  position = position + 1
  local ts, sig, key, path, body = lines[(position - 1) % #lines + 1]:match("([^\t]+)\t([^\t]+)\t([^\t]+)\t([^\t]+)\t(.*)")
  local headers = {
    ["Content-Type"] = "application/json",
    ["X-Client-ID"] = os.getenv("PUBLIC_KEY"),
    ["X-Timestamp"] = ts,
    ["X-Signature"] = sig,
  }
  if key ~= "-" then
    headers["Idempotency-Key"] = key
  end
  return wrk.format("POST", path, headers, body)
end
