// The refund execution screen: polls the dashboard's progress endpoint and shows confirmations n of m as the chain
// watcher reports them. When the refund or its transfer changes state the page reloads to show what comes next.
(function () {
  'use strict';
  var config = JSON.parse(document.getElementById('page-config').textContent || '{}');
  var shown = config.progress;
  if (!shown || shown.final || !shown.transaction || shown.transaction.status !== 'verifying') return;
  var bar = document.getElementById('progress-bar');
  var text = document.getElementById('progress-text');
  var count = document.getElementById('latest-count');

  var changed = function (now) {
    var tx = now.transaction;
    return now.status !== shown.status || !tx || tx.tx_hash !== shown.transaction.tx_hash ||
      tx.status !== shown.transaction.status;
  };

  var poll = function () {
    fetch(config.progressUrl, { credentials: 'same-origin', cache: 'no-store', headers: { Accept: 'application/json' } })
      .then(function (response) {
        if (!response.ok) throw new Error('progress ' + response.status);
        return response.json();
      })
      .then(function (now) {
        if (changed(now)) {
          window.location.reload();
          return;
        }
        var tx = now.transaction;
        bar.max = tx.required;
        bar.value = tx.confirmations;
        bar.textContent = tx.confirmations + ' of ' + tx.required;
        text.textContent = tx.confirmations + ' of ' + tx.required + ' confirmations';
        if (count) count.textContent = tx.confirmations + ' of ' + tx.required;
        window.setTimeout(poll, config.pollMs);
      })
      .catch(function () { window.setTimeout(poll, config.pollMs * 2); });
  };
  window.setTimeout(poll, config.pollMs);
})();
