// The merchant page's test harness: opens the SDK with callbacks that record into window.events,
// so a test can read what the SDK reported (functions cannot cross page.evaluate).
(function () {
  'use strict';
  var shop = window.SHOP;
  window.events = [];
  var record = function (name) {
    return function (arg) { window.events.push({ name: name, arg: arg === undefined ? null : JSON.parse(JSON.stringify(arg)) }); };
  };
  var onError = function (error) {
    window.events.push({ name: 'error', arg: {
      code: error.code, message: error.message, isServiceError: error instanceof window.Service.ServiceError } });
  };
  var onSignRequest = function (request) {
    window.events.push({ name: 'sign', arg: request });
    return Promise.resolve(shop.signedHash);
  };

  function load(checkoutUrl) {
    return window.Service.loadService(shop.publicKey, { checkoutUrl: checkoutUrl || shop.checkoutUrl });
  }

  // Returns the synchronous error (invalid arguments) or null; everything else lands in window.events.
  function open(kind, options, checkoutUrl) {
    return load(checkoutUrl).then(function (sdk) {
      window.sdk = sdk;
      var o = Object.assign({ onCancel: record('cancel'), onError: onError, onSuccess: record('success') }, options);
      if (o.mode === 'embed' && o.container === undefined) o.container = '#embed';
      if (kind === 'checkout') {
        o.onReady = record('ready');
        if (o.walletAddress) o.onSignRequest = onSignRequest;
      }
      try {
        if (kind === 'checkout') sdk.checkout(o);
        else window.closeRefund = sdk.openRefundRequest(o);
        return null;
      } catch (error) {
        return { code: error.code, message: error.message };
      }
    });
  }

  window.openCheckout = function (options, checkoutUrl) { return open('checkout', options, checkoutUrl); };
  window.openRefund = function (options) { return open('refund', options); };
})();
