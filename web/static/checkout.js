// The checkout page's behaviour on top of the server-rendered HTML: live status, copy buttons,
// the expiry countdown, cancel, and paying from an EIP-1193 wallet or through the SDK's signer.
(function () {
  'use strict';
  var page = window.ServicePage;
  var config = page.config;
  var messages = config.messages;
  var PAYABLE = ['waiting', 'confirming', 'partially_paid'];
  var FINAL = ['paid', 'expired', 'superseded', 'canceled'];
  var $ = function (id) { return document.getElementById(id); };
  var format = function (key, values) {
    return messages[key].replace(/\{(\w+)\}/g, function (_, name) { return String(values[name]); });
  };

  var status = config.status;
  var skew = Date.parse(status.now) - Date.now(); // server minus browser clock, for the countdown
  var pollTimer = null;
  var announced = false;

  function statusText(s) {
    if (s.state === 'partially_paid') return format('status_partially_paid', { residual: s.amount_due });
    var text = messages['status_' + s.state] || s.state;
    var c = s.confirmations;
    if (s.state === 'confirming' && c && c.n !== null && c.m !== null) {
      text += ' · ' + format('status_confirmations', { n: c.n, m: c.m });
    }
    return text;
  }

  function show(s) {
    status = s;
    var payable = PAYABLE.indexOf(s.state) !== -1;
    var settled = s.state === 'paid';
    $('amount-label').textContent = settled ? messages.amount_received : messages.amount_due;
    $('amount-due').textContent = settled ? s.amount_paid : s.amount_due;
    var paid = $('amount-paid');
    paid.hidden = s.amount_paid === '0.00' || settled;
    paid.textContent = format('amount_paid', { amount: s.amount_paid });
    var line = $('status');
    line.dataset.state = s.state;
    line.textContent = statusText(s);
    $('pay').hidden = !payable;
    $('countdown').hidden = !payable;
    var cancel = $('cancel');
    cancel.textContent = payable ? messages.cancel : messages.back_to_merchant;
    if (s.receipt_url) {
      $('receipt-link').href = s.receipt_url;
      $('receipt').hidden = false;
    }
    if (s.state === 'paid') succeed();
  }

  // SERVICE_SUCCESS to a framing SDK; in redirect mode, on to success_url (or return_url).
  function succeed() {
    if (announced) return;
    announced = true;
    $('cancel').hidden = true;
    if (page.framed) {
      page.post('SERVICE_SUCCESS', { sessionId: config.sessionId });
    } else if (config.successUrl) {
      $('status-note').textContent = messages.returning;
      setTimeout(function () { window.location.assign(config.successUrl); }, 1200);
    }
  }

  function poll() {
    clearTimeout(pollTimer);
    fetch(config.statusUrl, { cache: 'no-store', credentials: 'omit' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (s) { if (s) show(s); }, function () { /* offline for a moment: the next poll retries */ })
      .then(function () {
        if (FINAL.indexOf(status.state) === -1) {
          pollTimer = setTimeout(poll, document.hidden ? 4 * config.pollMs : config.pollMs);
        }
      });
  }
  document.addEventListener('visibilitychange', function () {
    if (!document.hidden && FINAL.indexOf(status.state) === -1) poll();
  });

  function tick() {
    var left = Math.floor((Date.parse(status.expires_at) - (Date.now() + skew)) / 1000);
    var el = $('countdown');
    if (left <= 0) {
      el.textContent = '';
      if (PAYABLE.indexOf(status.state) !== -1) poll(); // the server decides it has expired
      return;
    }
    var h = Math.floor(left / 3600), m = Math.floor(left / 60) % 60, sec = left % 60;
    var two = function (n) { return (n < 10 ? '0' : '') + n; };
    el.textContent = format('expires_in', { time: (h ? h + ':' + two(m) : m) + ':' + two(sec) });
    setTimeout(tick, 1000);
  }

  function note(text) { $('status-note').textContent = text; }

  // Copy buttons exist only where the script runs; a failing clipboard leaves the value selected.
  Array.prototype.forEach.call(document.querySelectorAll('button.copy'), function (button) {
    button.hidden = false;
    button.addEventListener('click', function () {
      var label = button.textContent;
      var done = function () {
        button.textContent = messages.copied;
        setTimeout(function () { button.textContent = label; }, 1500);
      };
      var select = function () {
        var range = document.createRange();
        range.selectNodeContents(button.previousElementSibling);
        window.getSelection().removeAllRanges();
        window.getSelection().addRange(range);
      };
      if (navigator.clipboard) navigator.clipboard.writeText(button.dataset.copy).then(done, select);
      else select();
    });
  });

  var cancel = $('cancel');
  cancel.addEventListener('click', function (event) {
    if (!page.framed) return; // a plain link to cancel_url or return_url
    event.preventDefault();
    page.post('SERVICE_CANCEL');
  });

  // Wallet: the SDK's signer when it pre-connected one, else an injected EIP-1193 provider.
  var proxied = page.framed && !!config.wallet.address;
  var injected = window.ethereum && typeof window.ethereum.request === 'function' ? window.ethereum : null;
  var account = proxied ? config.wallet.address : null;
  var hex = function (n) { return '0x' + Number(n).toString(16); };

  function showAccount(address) {
    account = address;
    var label = $('wallet-address');
    if (!label) return;
    label.textContent = format('wallet_connected', { address: address.slice(0, 6) + '…' + address.slice(-4) });
    label.hidden = false;
    $('wallet-connect').hidden = true;
  }

  function connect() {
    return injected.request({ method: 'eth_requestAccounts' }).then(function (accounts) {
      showAccount(accounts[0]);
      return accounts[0];
    });
  }

  function onChain(quote) {
    if (proxied) return Promise.resolve();
    return injected.request({ method: 'eth_chainId' }).then(function (id) {
      if (parseInt(id, 16) === quote.chainId) return undefined;
      return injected.request({ method: 'wallet_switchEthereumChain', params: [{ chainId: hex(quote.chainId) }] })
        .catch(function () { throw new Error(format('wallet_switch', { network: quote.networkName })); });
    });
  }

  function report(network, hash) {
    return fetch(config.attemptsUrl, {
      method: 'POST', credentials: 'omit', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ network: network, tx_hash: hash }),
    });
  }

  // What the wallet is doing is said under its button, where the buyer is looking.
  function pay(quote, button) {
    var say = function (text) { button.nextElementSibling.textContent = text; };
    button.disabled = true;
    say(messages.wallet_confirm);
    var from = account ? Promise.resolve(account) : connect();
    from.then(function (address) {
      return onChain(quote).then(function () {
        var tx = {
          from: address, to: quote.transfer.to, data: quote.transfer.data, value: '0x0', chainId: hex(quote.chainId),
        };
        return proxied ? page.signRequest('eth_sendTransaction', [tx])
          : injected.request({ method: 'eth_sendTransaction', params: [tx] });
      });
    }).then(function (hash) {
      say(format('wallet_sent', { hash: hash }));
      return report(quote.network, hash).then(poll);
    }).catch(function (error) {
      var reason = (error && error.message) || String(error);
      say(reason.indexOf(quote.networkName) !== -1 ? reason : format('wallet_failed', { reason: reason }));
    }).then(function () { button.disabled = false; });
  }

  if (proxied || injected) {
    Array.prototype.forEach.call(document.querySelectorAll('button.pay-wallet'), function (button) {
      var quote = config.quotes[Number(button.dataset.quote)];
      // A pre-connected wallet on a known chain pays only on that chain.
      if (proxied && config.wallet.chainId && quote.chainId !== config.wallet.chainId) return;
      button.hidden = false;
      button.addEventListener('click', function () { pay(quote, button); });
    });
    if (proxied) showAccount(config.wallet.address);
    else if ($('wallet-connect')) {
      $('wallet-connect').hidden = false;
      $('wallet-connect').addEventListener('click', function () { connect().catch(function (e) { note(e.message); }); });
    }
  }

  // Ready first: a page that loads already paid then posts its success to a listening SDK.
  page.ready();
  show(status);
  tick();
  if (FINAL.indexOf(status.state) === -1) pollTimer = setTimeout(poll, config.pollMs);
})();
