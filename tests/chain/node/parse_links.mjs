// Reads payment links and addresses the way third-party wallet code does, and prints what each parser gives back.
//
// stdin:  [{"link": "ethereum:…" | "solana:…" | "ton://transfer/…"} | {"address": "…", "family": "ton"|"tron"}, …]
// stdout: one answer per item, in order: the parser's own result, or {"error": message} when it refuses the item.
//
// Amounts are printed as the parsers hold them, as strings: eth-url-parser's BigNumber string (exponent form from
// 1e21 up), @solana/pay's JavaScript Number in its shortest round-trip form, the ton:// query's raw text.
import { readFileSync } from "node:fs";
import { parse as parseEip681 } from "eth-url-parser";
import { parseURL } from "@solana/pay";
import { Address } from "@ton/core";
import { TronWeb } from "tronweb";

function tonAddress(text) {
  const address = Address.parse(text);
  const answer = { raw: address.toRawString() };
  if (Address.isFriendly(text)) {
    const { isBounceable, isTestOnly } = Address.parseFriendly(text);
    Object.assign(answer, { bounceable: isBounceable, testOnly: isTestOnly });
  }
  return answer;
}

// @ton/core has no URI parser: wallets read ton:// links with the WHATWG URL parser and hand the parts to Address.
function tonLink(link) {
  const url = new URL(link);
  if (url.protocol !== "ton:" || url.host !== "transfer") throw new Error(`not a ton://transfer link: ${link}`);
  const query = url.searchParams;
  const amount = query.get("amount");
  if (amount !== null && BigInt(amount).toString() !== amount) throw new Error(`amount ${amount} is not an integer`);
  const jetton = query.get("jetton");
  return {
    recipient: tonAddress(decodeURIComponent(url.pathname.slice(1))),
    jetton: jetton === null ? null : tonAddress(jetton),
    amount,
    text: query.get("text"),
    keys: [...query.keys()],
  };
}

function solanaPay(link) {
  const { recipient, amount, splToken, reference, label, message, memo } = parseURL(link);
  return {
    recipient, amount: amount === undefined ? null : String(amount), splToken: splToken ?? null,
    reference: reference ?? [], label: label ?? null, message: message ?? null, memo: memo ?? null,
  };
}

function tronAddress(text) {
  const hex = TronWeb.address.toHex(text);
  return { isAddress: TronWeb.isAddress(text), hex, base58: TronWeb.address.fromHex(hex) };
}

function read(item) {
  if (item.family === "tron") return tronAddress(item.address);
  if (item.family === "ton") return tonAddress(item.address);
  if (item.link.startsWith("ethereum:")) return parseEip681(item.link);
  if (item.link.startsWith("solana:")) return solanaPay(item.link);
  if (item.link.startsWith("ton:")) return tonLink(item.link);
  throw new Error(`no parser for ${item.link}`);
}

const answers = JSON.parse(readFileSync(0, "utf8")).map((item) => {
  try {
    return read(item);
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
});
process.stdout.write(JSON.stringify(answers));
