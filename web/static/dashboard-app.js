// Progressive enhancement of the dashboard's server-rendered pages: the Issue Refund dialog opens in place, copy
// buttons reach the clipboard, the dialog's toggle shows only the fields its choice needs, a form is sent once.
// Every page works without this file: links and forms lead to the same server-rendered states.
(function () {
  'use strict';

  function openModal(dialog) {
    if (dialog.open) dialog.close(); // rendered open for browsers without scripts; reopen it as a modal
    dialog.showModal();
  }

  document.querySelectorAll('[data-dialog]').forEach(function (link) {
    link.addEventListener('click', function (event) {
      var dialog = document.getElementById(link.getAttribute('data-dialog'));
      // A dialog showing a minted link has no form: the link then loads a fresh one.
      if (!dialog || !dialog.querySelector('form')) return;
      event.preventDefault();
      openModal(dialog);
    });
  });
  document.querySelectorAll('dialog[data-open]').forEach(openModal);
  document.querySelectorAll('[data-dialog-close]').forEach(function (link) {
    link.addEventListener('click', function (event) {
      var dialog = link.closest('dialog');
      if (dialog && link.pathname === window.location.pathname) {
        event.preventDefault();
        dialog.close();
      }
    });
  });

  document.querySelectorAll('[data-copy]').forEach(function (button) {
    button.addEventListener('click', function () {
      var field = document.getElementById(button.getAttribute('data-copy'));
      var status = document.getElementById(field.id + '-copied');
      var text = field.tagName === 'INPUT' ? field.value : field.textContent;
      var say = function (message) { if (status) status.textContent = message; };
      var selectInstead = function () {
        if (field.tagName === 'INPUT') {
          field.focus();
          field.select();
        } else {
          window.getSelection().selectAllChildren(field);
        }
        say('Selected: press Ctrl+C (⌘C on a Mac) to copy');
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(function () { say('Copied'); }, selectInstead);
      } else {
        selectInstead();
      }
    });
  });

  // The system share sheet (a phone's messages, mail, chat apps) where the browser offers one; hidden elsewhere.
  if (navigator.share) {
    document.querySelectorAll('[data-share]').forEach(function (button) {
      var field = document.getElementById(button.getAttribute('data-share'));
      button.hidden = false;
      button.addEventListener('click', function () {
        navigator.share({ url: field.value }).catch(function () { /* the user closed the sheet */ });
      });
    });
  }

  document.querySelectorAll('form[data-refund-form]').forEach(function (form) {
    var parts = form.querySelectorAll('[data-when]');
    var submit = form.querySelector('[type=submit]');
    var address = form.querySelector('[name=refund_to_address]');
    var destination = form.querySelector('[name=destination]');
    var sync = function () {
      var checked = form.querySelector('input[name=action]:checked');
      var action = checked ? checked.value : 'execute';
      // A disabled fieldset is neither validated nor sent, so "send a link" never asks for an address.
      parts.forEach(function (part) { part.disabled = part.getAttribute('data-when') !== action; });
      // Back to the card: the provider routes it, so there is no address to ask for.
      var toCard = !!destination && destination.value.indexOf('card|') === 0;
      if (address) {
        address.required = action === 'execute' && !toCard;
        address.hidden = toCard;
        form.querySelector('label[for=' + address.id + ']').hidden = toCard;
      }
      submit.textContent = submit.getAttribute('data-label-' + action);
    };
    form.addEventListener('change', sync);
    sync();
  });

  var sent = [];
  document.querySelectorAll('form[data-once]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      var question = form.getAttribute('data-confirm');
      if (form.getAttribute('data-sent') || (question && !window.confirm(question))) {
        event.preventDefault();
        return;
      }
      // A second click would post again: two refunds, or a 409 for an action already taken.
      form.setAttribute('data-sent', '1');
      form.querySelectorAll('[type=submit]').forEach(function (button) { button.disabled = true; });
      sent.push(form);
    });
  });
  window.addEventListener('pageshow', function (event) {
    if (!event.persisted) return; // back to a page kept in memory: its forms may be used again
    sent.forEach(function (form) {
      form.removeAttribute('data-sent');
      form.querySelectorAll('[type=submit]').forEach(function (button) { button.disabled = false; });
    });
    sent = [];
  });
})();
