// Paying by card: the merchant's provider's own script holds the card fields, so no card number ever reaches
// this page's code or the service; the service confirms the payment with the provider, and the order moves
// only on the provider's webhook, which the status poll of checkout.js then shows.
(function () {
  'use strict';
  var config = window.ServicePage.config;
  var card = config.card;
  var messages = config.messages;
  if (!card || typeof window.Stripe !== 'function') return; // the provider's script did not load: no card form
  var stripe = window.Stripe(card.publishableKey);
  var element = stripe.elements().create('card');
  element.mount('#card-element');
  var button = document.getElementById('card-pay');
  var note = document.getElementById('card-note');
  var say = function (text) { note.textContent = text; };
  button.disabled = false;

  function confirmed(response) {
    return response.json().then(function (body) {
      if (!response.ok) throw new Error((body.error && body.error.message) || String(response.status));
      return body;
    });
  }

  function finish(payment) {
    // 3-D Secure: the provider's script asks the buyer's bank, then the webhook tells the service.
    if (payment.status === 'requires_action') {
      return stripe.confirmCardPayment(payment.client_secret).then(function (result) {
        if (result.error) throw new Error(result.error.message || 'authentication failed');
      });
    }
    if (payment.status !== 'succeeded' && payment.status !== 'processing') {
      throw new Error(payment.error || payment.status);
    }
    return undefined;
  }

  document.getElementById('card-form').addEventListener('submit', function (event) {
    event.preventDefault();
    button.disabled = true;
    say(messages.card_processing);
    stripe.createToken(element).then(function (result) {
      if (result.error) throw new Error(result.error.message || 'the card was not accepted');
      return fetch(card.paymentsUrl, {
        method: 'POST', credentials: 'omit', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ payment_method: result.token.card.id }),
      });
    }).then(confirmed).then(finish).then(function () {
      say(messages.card_accepted);
    }, function (error) {
      say(messages.card_failed.replace('{reason}', (error && error.message) || String(error)));
      button.disabled = false;
    });
  });
})();
