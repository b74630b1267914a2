var Service = (function (exports) {
  'use strict';

  // src/errors.ts
  var ServiceError = class extends Error {
    constructor(code, message) {
      super(message);
      this.name = "ServiceError";
      this.code = code;
      Object.setPrototypeOf(this, new.target.prototype);
    }
  };
  var invalid = (message) => new ServiceError("invalid_request_error", message);

  // src/url.ts
  var checkoutPage = (checkoutUrl, sessionId) => `${checkoutUrl}/c/${encodeURIComponent(sessionId)}`;
  var refundRequestPage = (checkoutUrl, token) => `${checkoutUrl}/refund-request/${encodeURIComponent(token)}`;
  function pageUrl(page, query) {
    const url = new URL(page);
    const set = (name, value) => {
      if (value !== void 0) url.searchParams.set(name, value);
    };
    set("locale", query.locale);
    set("hide_summary", query.hideSummary ? "1" : void 0);
    set("hide_header", query.hideHeader ? "1" : void 0);
    set("wallet_address", query.walletAddress);
    set("wallet_chain_id", query.walletChainId === void 0 ? void 0 : String(query.walletChainId));
    if (query.mode === "redirect") set("return_url", window.location.href);
    else set("sdk_mode", query.mode);
    return url.toString();
  }

  // src/options.ts
  var LOCALES = ["en", "vi", "ja", "ko", "es", "pt-BR", "ru", "tr", "zh-CN", "zh-TW"];
  var MODES = ["popup", "redirect", "embed"];
  var POPUP_WIDTH = { min: 320, max: 1280, default: 560 };
  var POPUP_HEIGHT = { min: 400, max: 1e3, default: 780 };
  var EMBED_HEIGHT = { min: 200, max: 2e3 };
  var DEFAULT_TIMEOUT_MS = 3e4;
  var TOKEN_PATTERN = /^rfqt_[A-Za-z0-9_-]+$/;
  var clamp = (value, { min, max }) => Math.min(max, Math.max(min, value));
  var describe = (value) => typeof value === "string" ? JSON.stringify(value) : typeof value === "function" ? "a function" : String(value);
  function check(where, o, field, ok, expected) {
    const value = o[field];
    if (value !== void 0 && !ok(value)) {
      throw invalid(`Invalid value for ${where}: ${field} should be ${expected}. You specified: ${describe(value)}.`);
    }
  }
  var isString = (v) => typeof v === "string" && v.length > 0;
  var isNumber = (v) => typeof v === "number" && Number.isFinite(v);
  var isBoolean = (v) => typeof v === "boolean";
  var isFunction = (v) => typeof v === "function";
  var isElement = (v) => typeof v === "object" && v !== null && v.nodeType === 1;
  function fields(where, options) {
    if (typeof options !== "object" || options === null) {
      throw invalid(`${where} expects an options object. You specified: ${describe(options)}.`);
    }
    return options;
  }
  function resolveContainer(where, container) {
    if (container === void 0) throw invalid(`Missing value for ${where}: container is required in embed mode.`);
    if (isElement(container)) return container;
    if (!isString(container)) {
      throw invalid(`Invalid value for ${where}: container should be a CSS selector or a DOM element. You specified: ${describe(container)}.`);
    }
    let found;
    try {
      found = document.querySelector(container);
    } catch {
      throw invalid(`Invalid value for ${where}: container ${describe(container)} is not a valid CSS selector.`);
    }
    if (!found) throw invalid(`Invalid value for ${where}: container ${describe(container)} matches no element.`);
    return found;
  }
  function common(where, o, callbacks) {
    var _a;
    check(where, o, "mode", (v) => MODES.includes(v), "one of popup, redirect, embed");
    check(where, o, "locale", (v) => LOCALES.includes(v), `one of ${LOCALES.join(", ")}`);
    check(where, o, "hideSummary", isBoolean, "a boolean");
    check(where, o, "hideHeader", isBoolean, "a boolean");
    check(where, o, "walletAddress", isString, "a non-empty string");
    for (const name of ["onCancel", "onError", ...callbacks]) check(where, o, name, isFunction, "a function");
    const mode = (_a = o.mode) != null ? _a : "popup";
    return { mode, container: mode === "embed" ? resolveContainer(where, o.container) : null };
  }
  function planCheckout(options, checkoutUrl) {
    var _a, _b, _c, _d;
    const where = "checkout()";
    const o = fields(where, options);
    if (!isString(o.sessionId)) {
      throw invalid(`Invalid value for ${where}: sessionId should be the non-empty session_key string. You specified: ${describe(o.sessionId)}.`);
    }
    const origin = new URL(checkoutUrl).origin;
    const onOrigin = (v) => isString(v) && /^https?:/.test(v) && sameOrigin(v, origin);
    check(where, o, "checkoutUrl", onOrigin, `an absolute URL on the checkout origin ${origin}`);
    check(where, o, "width", isNumber, "a number");
    check(where, o, "height", isNumber, "a number");
    check(where, o, "timeoutMs", (v) => isNumber(v) && v >= 0, "a number of milliseconds, 0 or more");
    check(where, o, "walletChainId", (v) => Number.isInteger(v) && v > 0, "a positive integer");
    const { mode, container } = common(where, o, ["onReady", "onSignRequest", "onSuccess"]);
    if (o.walletAddress !== void 0 && o.onSignRequest === void 0) {
      throw invalid(`Missing value for ${where}: onSignRequest is required when walletAddress is set.`);
    }
    if (o.walletChainId !== void 0 && o.walletAddress === void 0) {
      throw invalid(`Missing value for ${where}: walletChainId needs walletAddress.`);
    }
    if (o.walletAddress !== void 0 && mode === "redirect") {
      throw invalid(`Invalid value for ${where}: walletAddress needs mode popup or embed; redirect has no channel for onSignRequest.`);
    }
    const c = o;
    return {
      mode,
      container,
      url: pageUrl((_a = c.checkoutUrl) != null ? _a : checkoutPage(checkoutUrl, c.sessionId), {
        mode,
        locale: c.locale,
        hideSummary: c.hideSummary,
        hideHeader: c.hideHeader,
        walletAddress: c.walletAddress,
        walletChainId: c.walletChainId
      }),
      width: clamp((_b = c.width) != null ? _b : POPUP_WIDTH.default, POPUP_WIDTH),
      height: clamp((_c = c.height) != null ? _c : POPUP_HEIGHT.default, POPUP_HEIGHT),
      // docs/spec.md §4.3: the load timeout is popup only; an embed waits for its page however long it takes.
      timeoutMs: mode === "popup" ? (_d = c.timeoutMs) != null ? _d : DEFAULT_TIMEOUT_MS : 0
    };
  }
  function planRefundRequest(options, checkoutUrl) {
    const where = "openRefundRequest()";
    const o = fields(where, options);
    if (typeof o.token !== "string" || !TOKEN_PATTERN.test(o.token)) {
      throw invalid(`Invalid value for ${where}: token should be a refund-request token (rfqt_...). You specified: ${describe(o.token)}.`);
    }
    const { mode, container } = common(where, o, ["onSuccess"]);
    const r = o;
    return {
      mode,
      container,
      url: pageUrl(refundRequestPage(checkoutUrl, r.token), {
        mode,
        locale: r.locale,
        hideSummary: r.hideSummary,
        hideHeader: r.hideHeader,
        walletAddress: r.walletAddress
      }),
      width: POPUP_WIDTH.default,
      height: POPUP_HEIGHT.default,
      timeoutMs: 0
      // docs/spec.md §8: the refund-request popup has no load timeout.
    };
  }
  function sameOrigin(url, origin) {
    try {
      return new URL(url).origin === origin;
    } catch {
      return false;
    }
  }

  // src/embed.ts
  function embedHost(iframe, container) {
    Object.assign(iframe.style, { display: "block", width: "100%", height: `${POPUP_HEIGHT.default}px`, border: "0" });
    container.append(iframe);
    return {
      resize(height) {
        iframe.style.height = `${clamp(height, EMBED_HEIGHT)}px`;
      },
      unmount() {
        iframe.remove();
      }
    };
  }

  // src/popup.ts
  var stack = [];
  var savedOverflow = "";
  var css = (el, style) => {
    Object.assign(el.style, style);
  };
  function popupHost(iframe, size, title, dismiss) {
    const overlay = document.createElement("div");
    css(overlay, {
      position: "fixed",
      top: "0",
      right: "0",
      bottom: "0",
      left: "0",
      zIndex: "2147483647",
      display: "flex",
      alignItems: "center",
      justifyContent: "center",
      background: "rgba(0, 0, 0, 0.6)"
    });
    const dialog = document.createElement("div");
    dialog.setAttribute("role", "dialog");
    dialog.setAttribute("aria-modal", "true");
    dialog.setAttribute("aria-label", title);
    css(dialog, {
      position: "relative",
      width: `${size.width}px`,
      height: `${size.height}px`,
      maxWidth: "100vw",
      maxHeight: "100vh",
      background: "#fff",
      borderRadius: "8px",
      overflow: "hidden",
      boxShadow: "0 12px 48px rgba(0, 0, 0, 0.35)"
    });
    const closeButton = document.createElement("button");
    closeButton.type = "button";
    closeButton.setAttribute("aria-label", "Close");
    closeButton.textContent = "\xD7";
    css(closeButton, {
      position: "absolute",
      top: "8px",
      right: "8px",
      zIndex: "1",
      width: "32px",
      height: "32px",
      padding: "0",
      border: "0",
      borderRadius: "50%",
      background: "rgba(0, 0, 0, 0.55)",
      color: "#fff",
      font: "20px/32px sans-serif",
      cursor: "pointer"
    });
    css(iframe, { display: "block", width: "100%", height: "100%", border: "0" });
    const sentinel = document.createElement("span");
    sentinel.tabIndex = 0;
    dialog.append(closeButton, iframe, sentinel);
    overlay.append(dialog);
    const focusables = [closeButton, iframe];
    const onKey = (event) => {
      if (stack[stack.length - 1] !== overlay) return;
      if (event.key === "Escape") {
        event.preventDefault();
        dismiss();
      } else if (event.key === "Tab") {
        event.preventDefault();
        const i = focusables.indexOf(document.activeElement);
        const step = event.shiftKey ? -1 : 1;
        const next = i === -1 ? 0 : (i + step + focusables.length) % focusables.length;
        focusables[next].focus();
      }
    };
    closeButton.addEventListener("click", dismiss);
    overlay.addEventListener("click", (event) => {
      if (event.target === overlay) dismiss();
    });
    sentinel.addEventListener("focus", () => closeButton.focus());
    const previousFocus = document.activeElement;
    if (stack.length === 0) {
      savedOverflow = document.body.style.overflow;
      document.body.style.overflow = "hidden";
    }
    stack.push(overlay);
    document.addEventListener("keydown", onKey, true);
    document.body.append(overlay);
    closeButton.focus();
    return {
      resize(height, width) {
        dialog.style.height = `${clamp(height, POPUP_HEIGHT)}px`;
        if (width !== void 0) dialog.style.width = `${clamp(width, POPUP_WIDTH)}px`;
      },
      unmount() {
        const at = stack.indexOf(overlay);
        if (at === -1) return;
        const wasTopmost = at === stack.length - 1;
        stack.splice(at, 1);
        document.removeEventListener("keydown", onKey, true);
        overlay.remove();
        if (stack.length === 0) document.body.style.overflow = savedOverflow;
        if (wasTopmost && (previousFocus == null ? void 0 : previousFocus.isConnected)) previousFocus.focus();
      }
    };
  }

  // src/frame.ts
  var isNumber2 = (v) => typeof v === "number" && Number.isFinite(v);
  function openFrame(config) {
    const { plan, callbacks } = config;
    const origin = new URL(plan.url).origin;
    let open = true;
    let ready = false;
    let succeeded = false;
    let timer;
    const close = (then) => {
      var _a;
      if (!open) return;
      open = false;
      clearTimeout(timer);
      window.removeEventListener("message", onMessage);
      host.unmount();
      (_a = config.onClosed) == null ? void 0 : _a.call(config);
      then == null ? void 0 : then();
    };
    const dismiss = () => close(succeeded ? void 0 : callbacks.onCancel);
    const fail = (code, message) => close(() => {
      var _a;
      return (_a = callbacks.onError) == null ? void 0 : _a.call(callbacks, new ServiceError(code, message));
    });
    const iframe = document.createElement("iframe");
    iframe.src = plan.url;
    iframe.title = config.title;
    iframe.setAttribute("allow", "payment; clipboard-write");
    function onMessage(event) {
      var _a, _b;
      if (event.origin !== origin || event.source === null || event.source !== iframe.contentWindow) return;
      const message = event.data;
      if (typeof message !== "object" || message === null || message.source !== "service") return;
      switch (message.type) {
        case "SERVICE_READY":
          if (ready) return;
          ready = true;
          clearTimeout(timer);
          (_a = callbacks.onReady) == null ? void 0 : _a.call(callbacks);
          return;
        case "SERVICE_RESIZE":
          if (isNumber2(message.height)) host.resize(message.height, isNumber2(message.width) ? message.width : void 0);
          return;
        case "SERVICE_SUCCESS": {
          const result = succeeded ? void 0 : config.readSuccess(message);
          if (result === void 0) return;
          succeeded = true;
          if (config.closeOnSuccess) close();
          (_b = callbacks.onSuccess) == null ? void 0 : _b.call(callbacks, result);
          return;
        }
        case "SERVICE_CANCEL":
          dismiss();
          return;
        case "SERVICE_ERROR":
          fail("iframe_load_error", `The hosted page reported ${String(message.code)}: ${String(message.message)}`);
          return;
        case "SERVICE_SIGN_REQUEST":
          sign(message);
      }
    }
    function sign(message) {
      const { id, method, params } = message;
      if (typeof id !== "string" && typeof id !== "number") return;
      const target = iframe.contentWindow;
      const reply = (body) => {
        if (open) target == null ? void 0 : target.postMessage({ source: "service", type: "SERVICE_SIGN_RESPONSE", id, ...body }, origin);
      };
      const handler = callbacks.onSignRequest;
      if (!handler || typeof method !== "string") {
        reply({ error: handler ? "method should be a string" : "No onSignRequest handler was given to the SDK" });
        return;
      }
      new Promise((resolve) => resolve(handler({ method, params: Array.isArray(params) ? params : [] }))).then(
        (result) => reply({ result }),
        (error) => reply({ error: error instanceof Error ? error.message : String(error) })
      );
    }
    window.addEventListener("message", onMessage);
    const host = plan.mode === "popup" ? popupHost(iframe, plan, config.title, dismiss) : embedHost(iframe, plan.container);
    if (plan.timeoutMs > 0) {
      timer = setTimeout(
        () => fail("iframe_timeout_error", `The hosted page did not become ready within ${plan.timeoutMs} ms.`),
        plan.timeoutMs
      );
    }
    if (typeof fetch === "function") {
      fetch(plan.url, { mode: "no-cors" }).catch(() => {
        if (open && !ready) fail("iframe_load_error", `Could not load the hosted page at ${origin}.`);
      });
    }
    return dismiss;
  }

  // src/instance.ts
  var readRefund = (message) => {
    const { linkToken, refundId } = message;
    return typeof linkToken === "string" && linkToken && typeof refundId === "string" && refundId ? { linkToken, refundId } : void 0;
  };
  var noop = () => void 0;
  function createInstance(checkoutUrl) {
    let dismissCheckout = null;
    return {
      checkout(options) {
        const plan = planCheckout(options, checkoutUrl);
        if (plan.mode === "redirect") {
          window.location.href = plan.url;
          return;
        }
        if (dismissCheckout) {
          const error = new ServiceError("already_open_error", "Another checkout is already open. Call sdk.close() first.");
          queueMicrotask(() => {
            var _a;
            return (_a = options.onError) == null ? void 0 : _a.call(options, error);
          });
          return;
        }
        dismissCheckout = openFrame({
          plan,
          title: "Checkout",
          callbacks: options,
          readSuccess: () => ({ sessionId: options.sessionId }),
          closeOnSuccess: true,
          onClosed: () => {
            dismissCheckout = null;
          }
        });
      },
      close() {
        dismissCheckout == null ? void 0 : dismissCheckout();
      },
      openRefundRequest(options) {
        const plan = planRefundRequest(options, checkoutUrl);
        if (plan.mode === "redirect") {
          window.location.href = plan.url;
          return noop;
        }
        return openFrame({ plan, title: "Refund request", callbacks: options, readSuccess: readRefund, closeOnSuccess: false });
      }
    };
  }

  // src/loader.ts
  var DEFAULT_CHECKOUT_URL = "https://checkout.service.example";
  var KEY_PATTERN = /^pk_(live|test)_[A-Za-z0-9]+$/;
  var cache = /* @__PURE__ */ new Map();
  function baseUrl(options) {
    if (options === void 0) return DEFAULT_CHECKOUT_URL;
    if (typeof options !== "object" || options === null) {
      throw invalid(`loadService() expects an options object as its second argument. You specified: ${String(options)}.`);
    }
    const { checkoutUrl } = options;
    if (checkoutUrl === void 0) return DEFAULT_CHECKOUT_URL;
    let url;
    try {
      url = typeof checkoutUrl === "string" ? new URL(checkoutUrl) : void 0;
    } catch {
      url = void 0;
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash) {
      throw invalid(
        `Invalid value for loadService(): checkoutUrl should be an absolute http(s) URL without query or fragment. You specified: ${JSON.stringify(checkoutUrl)}.`
      );
    }
    return checkoutUrl.replace(/\/+$/, "");
  }
  function loadService(publicKey, options) {
    let checkoutUrl;
    try {
      if (typeof publicKey !== "string" || !KEY_PATTERN.test(publicKey)) {
        throw invalid(`Invalid value for loadService(): publicKey should look like pk_live_... or pk_test_.... You specified: ${JSON.stringify(publicKey)}.`);
      }
      checkoutUrl = baseUrl(options);
    } catch (error) {
      return Promise.reject(error);
    }
    const key = `${publicKey} ${checkoutUrl}`;
    let promise = cache.get(key);
    if (!promise) {
      promise = Promise.resolve().then(() => {
        if (typeof window === "undefined" || typeof document === "undefined") {
          throw invalid("loadService() runs in a browser only: there is no window or document here.");
        }
        return createInstance(checkoutUrl);
      });
      promise.catch(() => cache.delete(key));
      cache.set(key, promise);
    }
    return promise;
  }

  // src/index.ts
  var VERSION = "0.1.1-beta.17";

  exports.ServiceError = ServiceError;
  exports.VERSION = VERSION;
  exports.loadService = loadService;

  return exports;

})({});
//# sourceMappingURL=index.global.js.map
//# sourceMappingURL=index.global.js.map