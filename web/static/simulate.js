// Test mode's "Simulate payment": posts the amount to the page's own endpoint and shows the page again in the
// order's new state. Script only: hosted pages send no referrer, so a browser posts a plain form with
// `Origin: null`, which the endpoint refuses like any other origin.
(function () {
  'use strict';
  var form = document.querySelector('[data-testid=simulate-form]');
  if (!form) return;
  var button = form.querySelector('button');
  var note = form.querySelector('[role=status]');
  button.hidden = false;
  form.addEventListener('submit', function (event) {
    event.preventDefault();
    button.disabled = true;
    fetch(form.action, {
      method: 'POST', credentials: 'omit', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ amount: form.elements.amount.value }),
    }).then(function (response) {
      if (response.ok) { window.location.reload(); return undefined; }
      return response.json().then(function (body) { throw new Error(body.error.message); });
    }).catch(function (error) {
      note.textContent = error.message;
      button.disabled = false;
    });
  });
}());
