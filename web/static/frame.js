// The hosted pages' side of the postMessage protocol with the SDK (docs/postmessage.md).
// Every hosted page loads it; it exposes window.ServicePage for the page's own script.
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('page-config').textContent);
  // Post only when the SDK said it frames us (sdk_mode) and a parent really exists.
  var framed = (config.sdkMode === 'popup' || config.sdkMode === 'embed') && window.parent !== window;

  function originOf(url) {
    try { return new URL(url).origin; } catch (e) { return null; }
  }
  // The merchant page's origin when the browser tells it; the SDK checks ours on every message anyway.
  // A referrer of our own origin is a page that navigated inside the frame, not the parent: no clue then.
  var referrer = originOf(document.referrer);
  var parentOrigin = (window.location.ancestorOrigins && window.location.ancestorOrigins[0]) ||
    (referrer !== window.location.origin && referrer) || '*';

  function post(type, fields) {
    if (!framed) return;
    var message = { source: 'service', type: type };
    for (var key in fields || {}) message[key] = fields[key];
    window.parent.postMessage(message, parentOrigin);
  }

  // Wallet requests proxied to the SDK's onSignRequest; each answer is matched by its id.
  var pending = {};
  var nextId = 1;
  function signRequest(method, params) {
    return new Promise(function (resolve, reject) {
      var id = 'req_' + nextId++;
      pending[id] = { resolve: resolve, reject: reject };
      post('SERVICE_SIGN_REQUEST', { id: id, method: method, params: params || [] });
    });
  }
  window.addEventListener('message', function (event) {
    if (event.source !== window.parent || (parentOrigin !== '*' && event.origin !== parentOrigin)) return;
    var m = event.data;
    if (!m || m.source !== 'service' || m.type !== 'SERVICE_SIGN_RESPONSE' || !pending[m.id]) return;
    var waiter = pending[m.id];
    delete pending[m.id];
    if (typeof m.result === 'string') waiter.resolve(m.result);
    else waiter.reject(new Error(String(m.error || 'The signer gave no result')));
  });

  var lastHeight = 0;
  function resize() {
    // The body wraps the content exactly (no min-height), so its box is the height the page needs.
    var height = Math.ceil(document.body.getBoundingClientRect().height);
    if (height === lastHeight) return;
    lastHeight = height;
    post('SERVICE_RESIZE', { height: height });
  }

  function ready() {
    post('SERVICE_READY');
    resize();
    if ('ResizeObserver' in window) new ResizeObserver(resize).observe(document.body);
  }

  window.ServicePage = { config: config, framed: framed, post: post, signRequest: signRequest, ready: ready };

  if (config.error) {
    post('SERVICE_ERROR', config.error);
    return;
  }
  // Escape with the focus inside the frame reaches us, not the SDK: hand it over as a cancel.
  document.addEventListener('keydown', function (event) {
    if (event.key === 'Escape') post('SERVICE_CANCEL');
  });
})();
