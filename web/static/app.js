// The merchant app: a keypad that sells through the dashboard's JSON routes, the sale's QR and live status, and
// the day's sales. Money figures are only ever shown from a fresh answer: offline, they are hidden, not kept.
(function () {
  'use strict';

  var config = JSON.parse(document.getElementById('page-config').textContent);
  var say = config.messages;
  var POLL_MS = 1000; // the status must turn within 2 s of the order's change
  var FINAL = { paid: 'app_paid', expired: 'app_expired', canceled: 'app_canceled', superseded: 'app_expired' };
  // An order's status in the day's list, in the device's language.
  var ORDER_STATUS = { PENDING: 'app_waiting', PAID: 'app_paid', PARTIAL_PAID: 'app_underpaid_short',
    CANCELED: 'app_canceled', REFUNDED: 'app_refunded', PARTIALLY_REFUNDED: 'app_partly_refunded' };
  var me = null;
  var cents = 0; // integer cents: no float ever holds money
  var polling = null;
  var current = null; // the order id of the sale on screen
  var $ = function (id) { return document.getElementById(id); };

  function text(template, values) {
    return template.replace(/\{(\w+)\}/g, function (_, name) { return values[name]; });
  }

  function amountText() {
    var whole = Math.floor(cents / 100), part = String(cents % 100);
    return whole + '.' + (part.length < 2 ? '0' + part : part);
  }

  function show(section) {
    ['signed-out', 'locked', 'set-pin', 'sell', 'checkout', 'sales', 'refunds'].forEach(function (id) {
      $(id).hidden = id !== section;
    });
    $('tabs').hidden = ['signed-out', 'locked'].indexOf(section) >= 0;
    $('lock').hidden = !me || section === 'locked';
    document.querySelectorAll('[data-tab]').forEach(function (tab) {
      tab.setAttribute('aria-pressed', String(tab.getAttribute('data-tab') === section ||
        (section === 'checkout' && tab.getAttribute('data-tab') === 'sell')));
    });
  }

  function offline(isOffline) {
    $('offline').hidden = !isOffline;
    document.body.classList.toggle('is-offline', isOffline);
    if (isOffline) $('sale-status').textContent = $('totals').textContent = ''; // gone, not kept to show stale
  }

  // Back online: what was on screen is asked for again before any figure shows.
  function reconnected() {
    offline(false);
    if (!me) start();
    else if (!$('checkout').hidden && current) follow(current, 0);
    else if (!$('sales').hidden) loadSales();
  }

  // Every call: the session's CSRF token, no cache, and a plain answer of what went wrong.
  function call(method, path, body, headers) {
    var options = { method: method, credentials: 'same-origin', cache: 'no-store', headers: headers || {} };
    if (me) options.headers['X-CSRF-Token'] = me.csrf;
    if (body) {
      options.headers['Content-Type'] = 'application/json';
      options.body = JSON.stringify(body);
    }
    return fetch(path, options).then(function (response) {
      offline(false);
      return response.json().catch(function () { return {}; }).then(function (data) {
        if (response.status === 401) { signedOut(); throw new Error('signed out'); }
        if (response.status === 423) { showLocked(); throw new Error('locked'); }
        if (!response.ok) {
          var error = new Error((data.error && data.error.message) || String(response.status));
          error.details = data.error || {};
          throw error;
        }
        return data;
      });
    }, function (error) {
      offline(true);
      throw error;
    });
  }

  function base() { return config.prefix + '/' + me.mode + '/app'; }

  function signedOut() {
    me = null;
    stopPolling();
    $('signout').hidden = true;
    show('signed-out');
  }

  // A locked device shows nothing but the PIN field: the sale on screen, its QR and the day's sales go too.
  function showLocked() {
    stopPolling();
    $('unlock-pin').value = '';
    show('locked');
    $('unlock-pin').focus();
  }

  function lock() {
    if (!me.pin) { show('set-pin'); return; }
    call('POST', config.app + '/lock', {}).then(showLocked, function () { /* offline: the banner says so */ });
  }

  function savePin(event) {
    event.preventDefault();
    $('pin-error').textContent = '';
    call('POST', config.app + '/pin', { pin: $('new-pin').value, password: $('pin-password').value }).then(function () {
      me.pin = true;
      $('new-pin').value = $('pin-password').value = '';
      lock();
    }, function (error) { $('pin-error').textContent = error.message; });
  }

  function unlock(event) {
    event.preventDefault();
    $('unlock-error').textContent = '';
    call('POST', config.app + '/unlock', { pin: $('unlock-pin').value }).then(function () {
      renderAmount();
      show('sell');
    }, function (error) {
      $('unlock-pin').value = '';
      var left = error.details && error.details.tries_left;
      $('unlock-error').textContent = left ? text(say.app_wrong_pin, { left: left }) : error.message;
    });
  }

  function renderAmount() {
    $('amount').textContent = amountText();
    $('charge').textContent = text(say.app_charge, { amount: amountText() });
    $('charge').disabled = cents === 0;
  }

  function key(value) {
    if (value === 'back') cents = Math.floor(cents / 10);
    else if (String(cents).length + value.length <= 9) cents = cents * Math.pow(10, value.length) + Number(value);
    renderAmount();
  }

  function statusText(status) {
    if (FINAL[status.state]) return say[FINAL[status.state]];
    if (status.state === 'partially_paid') return text(say.app_underpaid, { residual: status.amount_due });
    return say[status.state === 'confirming' ? 'app_confirming' : 'app_waiting'];
  }

  function renderSale(sale) {
    $('scan').textContent = text(say.app_scan, { amount: sale.amount });
    $('qr').src = sale.qr;
    $('qr').alt = sale.checkout_url;
    $('qr').setAttribute('data-url', sale.checkout_url);
    $('networks').textContent = text(say.app_networks, { networks: sale.networks.join(', ') });
    $('sale-number').textContent = '#' + sale.order_number + (sale.external_ref ? ' · ' + sale.external_ref : '');
    $('sale-status').textContent = statusText(sale.status);
    $('sale-status').setAttribute('data-state', sale.status.state);
    // Once paid or expired there is nothing left to scan: a QR still shown would invite a second payment.
    $('qr').hidden = $('scan').hidden = Boolean(FINAL[sale.status.state]);
    // Paid: the buyer's receipt instead, to scan or to print on the counter's printer.
    $('receipt').hidden = !sale.receipt_qr;
    if (sale.receipt_qr) {
      $('receipt-qr').src = sale.receipt_qr;
      $('receipt-qr').setAttribute('data-url', sale.status.receipt_url);
      $('receipt-print').href = sale.status.receipt_url + '?print=1';
    }
    if (FINAL[sale.status.state]) stopPolling();
  }

  function stopPolling() {
    if (polling) clearTimeout(polling);
    polling = null;
  }

  function follow(orderId, firstMs) {
    stopPolling();
    current = orderId;
    polling = setTimeout(function tick() {
      call('GET', base() + '/sales/' + encodeURIComponent(orderId)).then(function (sale) {
        if (polling === null) return;
        renderSale(sale);
        if (!FINAL[sale.status.state]) polling = setTimeout(tick, POLL_MS);
      }, function () {
        if (polling !== null && me) polling = setTimeout(tick, POLL_MS); // offline: keep asking, show nothing stale
      });
    }, firstMs === undefined ? POLL_MS : firstMs);
  }

  // A sale keeps its Idempotency-Key until it is answered: tapped again after a lost answer (the network dropped,
  // the service was away), the same sale gets the order the first tap made, never a second one.
  var pending = null;

  function newKey() {
    if (window.crypto.randomUUID) return window.crypto.randomUUID();
    return Array.prototype.map.call(window.crypto.getRandomValues(new Uint8Array(16)), function (b) {
      return (b < 16 ? '0' : '') + b.toString(16);
    }).join('');
  }

  function charge() {
    $('charge').disabled = true; // one sale per tap, however fast the taps
    $('sell-error').textContent = '';
    var note = $('note').value.trim();
    var body = { amount: amountText(), external_ref: note || null }, same = JSON.stringify(body);
    if (!pending || pending.body !== same) pending = { body: same, key: newKey() };
    call('POST', base() + '/sales', body, { 'Idempotency-Key': pending.key }).then(function (sale) {
      pending = null;
      cents = 0;
      $('note').value = '';
      renderAmount();
      renderSale(sale);
      show('checkout');
      follow(sale.order_id);
    }, function (error) {
      $('sell-error').textContent = text(say.app_error, { message: error.message });
      renderAmount();
    });
  }

  function midnight() {
    var now = new Date(), day = new Date(now.getFullYear(), now.getMonth(), now.getDate());
    var offset = -day.getTimezoneOffset(), sign = offset >= 0 ? '+' : '-', abs = Math.abs(offset);
    var pad = function (n) { return (n < 10 ? '0' : '') + n; };
    return day.getFullYear() + '-' + pad(day.getMonth() + 1) + '-' + pad(day.getDate()) + 'T00:00:00' + sign +
      pad(Math.floor(abs / 60)) + ':' + pad(abs % 60);
  }

  function loadSales() {
    show('sales');
    $('totals').textContent = '';
    $('sales-list').replaceChildren();
    call('GET', base() + '/sales?since=' + encodeURIComponent(midnight())).then(function (day) {
      $('totals').textContent = day.count ? text(say.app_total, { count: day.count, amount: day.paid }) : say.app_no_sales;
      day.sales.forEach(function (sale) {
        var item = document.createElement('li');
        item.setAttribute('data-order-id', sale.order_id);
        item.textContent = '#' + sale.order_number + ' · ' + sale.amount + ' USD · ' + say[sale.expired ? 'app_expired' : ORDER_STATUS[sale.status]] +
          (sale.external_ref ? ' · ' + sale.external_ref : '');
        $('sales-list').appendChild(item);
      });
    }, function () { /* offline or signed out: the banner or the sign-in link says so */ });
  }

  // The buyer's checkout QR, read by the device's camera where the browser can decode it; a handheld scanner
  // types into the field like a keyboard.
  function scanQr() {
    var video = $('camera'), detector = new window.BarcodeDetector({ formats: ['qr_code'] });
    navigator.mediaDevices.getUserMedia({ video: { facingMode: 'environment' } }).then(function (stream) {
      var stop = function () { stream.getTracks().forEach(function (track) { track.stop(); }); video.hidden = true; };
      video.srcObject = stream;
      video.hidden = false;
      video.play();
      (function look() {
        detector.detect(video).then(function (codes) {
          if (!codes.length) return requestAnimationFrame(look);
          stop();
          $('find-q').value = codes[0].rawValue;
          $('find').requestSubmit();
        }, stop);
      })();
    }, function () { $('scan-qr').hidden = true; });
  }

  // The bell: the unread count, read again every half minute; the list and marking read are the dashboard's page.
  function bell() {
    call('GET', config.app + '/notifications').then(function (found) {
      $('unread').textContent = found.unread ? String(found.unread) : '';
      $('bell').hidden = false;
    }, function () { /* offline or signed out: the banner or the sign-in link says so */ });
  }

  // A member of several merchants: the switch lists each (the server checks the choice is theirs).
  function teams(who) {
    var select = $('switch-to');
    select.textContent = '';
    who.merchants.forEach(function (team) {
      var option = document.createElement('option');
      option.value = team.user_id;
      option.textContent = team.merchant_name + ' (' + team.role + ')';
      option.selected = team.current;
      select.appendChild(option);
    });
    $('switch-csrf').value = who.csrf;
    $('switch').hidden = who.merchants.length < 2;
  }

  function start() {
    call('GET', config.app + '/me').then(function (who) {
      me = who;
      $('who').textContent = who.email;
      $('merchant').textContent = who.merchant_name;
      teams(who);
      $('signout-csrf').value = who.csrf;
      $('signout').hidden = false;
      $('test-mode').hidden = who.mode !== 'test';
      var back = config.prefix + '/' + who.mode;
      $('find').action = back + '/orders';
      $('review').href = back + '/review';
      $('bell').href = back + '/notifications';
      bell();
      setInterval(bell, 30000);
      // The server refuses the refund screens to a role without them all the same; the tab only spares a 403.
      document.querySelector('[data-tab="refunds"]').hidden = !who.can.refund;
      $('menu').hidden = !who.can.manage_team;
      $('scan-qr').hidden = !('BarcodeDetector' in window && navigator.mediaDevices);
      renderAmount();
      if (who.locked) showLocked(); else show('sell');
    }, function () { /* offline: the banner says so; signed out: the sign-in link */ });
  }

  document.querySelectorAll('[data-key]').forEach(function (button) {
    button.addEventListener('click', function () { key(button.getAttribute('data-key')); });
  });
  document.querySelectorAll('[data-tab]').forEach(function (tab) {
    tab.addEventListener('click', function () {
      stopPolling();
      var name = tab.getAttribute('data-tab');
      if (name === 'sales') loadSales(); else show(name);
    });
  });
  $('charge').addEventListener('click', charge);
  $('scan-qr').addEventListener('click', scanQr);
  $('lock').addEventListener('click', lock);
  $('pin-form').addEventListener('submit', savePin);
  $('unlock-form').addEventListener('submit', unlock);
  $('clear').addEventListener('click', function () { cents = 0; renderAmount(); });
  $('new-sale').addEventListener('click', function () { stopPolling(); show('sell'); });
  window.addEventListener('offline', function () { offline(true); });
  window.addEventListener('online', reconnected);

  document.body.classList.remove('starting');
  offline(!navigator.onLine);
  start();
  if ('serviceWorker' in navigator) {
    navigator.serviceWorker.register(config.worker, { scope: config.scope }).catch(function () { /* plain page */ });
  }
})();
