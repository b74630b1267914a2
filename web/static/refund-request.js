// The refund-request form and status pages: submit once with fetch, tell the SDK through frame.js
// (SERVICE_SUCCESS {linkToken, refundId}), keep the coin list in step with the network.
(function () {
  'use strict';
  var page = window.ServicePage;

  var form = document.getElementById('refund-form');
  if (form) {
    var network = document.getElementById('refund_network');
    var token = document.getElementById('refund_token_address');
    var syncCoins = function () {
      var first = null;
      Array.prototype.forEach.call(token.options, function (option) {
        var match = option.getAttribute('data-network') === network.value;
        option.hidden = !match;
        option.disabled = !match;
        if (match && first === null) first = option;
      });
      if (!token.value || token.selectedOptions[0].disabled) token.value = first ? first.value : '';
    };
    if (network) { // a card-paid order's form has no destination to choose
      network.addEventListener('change', syncCoins);
      syncCoins();
    }

    var submitting = false;
    var button = document.getElementById('refund-submit');
    var error = document.getElementById('refund-error');
    var fail = function (text) {
      error.textContent = text;
      error.hidden = false;
      submitting = false;
      button.disabled = false;
    };
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (submitting) return; // a double click sends one request
      submitting = true;
      button.disabled = true;
      var body = {};
      new FormData(form).forEach(function (value, key) { if (value !== '') body[key] = value; });
      fetch(form.action, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
        .then(function (response) { return response.json().then(function (data) { return [response.status, data]; }); })
        .then(function (result) {
          var status = result[0], data = result[1];
          if (status === 201) {
            page.post('SERVICE_SUCCESS', { linkToken: data.linkToken, refundId: data.refundId });
            window.location.replace('/r/' + data.linkToken + window.location.search);
          } else if (status === 409) {
            window.location.reload(); // the link was used meanwhile: show its state
          } else {
            fail((data.error && data.error.message) || 'Error ' + status);
          }
        })
        .catch(function (reason) { fail(String(reason)); });
    });
    document.getElementById('refund-cancel').addEventListener('click', function () { page.post('SERVICE_CANCEL'); });
  }
  page.ready();
})();
