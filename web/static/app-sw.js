// The merchant app's service worker: it keeps the shell (page, script, style, manifest, icons) so the app starts
// without a network, and nothing else. Sales, statuses, totals and the dashboard's pages always go to the server:
// a cached money figure would be shown as current when it is not.
'use strict';

var CACHE = 'counter-shell-v1';
var APP = new URL('app', self.registration.scope).pathname; // the scope is the dashboard's prefix
var SHELL = [APP, APP + '/manifest.webmanifest', '/assets/app.js', '/assets/app.css', '/assets/app-icon-192.png',
  '/assets/app-icon-512.png'];

self.addEventListener('install', function (event) {
  event.waitUntil(caches.open(CACHE).then(function (cache) {
    return cache.addAll(SHELL.map(function (path) { return new Request(path, { credentials: 'same-origin' }); }));
  }).then(function () { return self.skipWaiting(); }));
});

self.addEventListener('activate', function (event) {
  event.waitUntil(caches.keys().then(function (names) {
    return Promise.all(names.filter(function (name) { return name !== CACHE; }).map(function (name) {
      return caches.delete(name);
    }));
  }).then(function () { return self.clients.claim(); }));
});

// The network first, so a new release reaches the counter at once; the cached shell only when it fails.
self.addEventListener('fetch', function (event) {
  var url = new URL(event.request.url);
  if (event.request.method !== 'GET' || url.origin !== self.location.origin || SHELL.indexOf(url.pathname) < 0) {
    return;
  }
  event.respondWith(fetch(event.request).then(function (response) {
    if (response.ok) {
      var copy = response.clone();
      caches.open(CACHE).then(function (cache) { cache.put(url.pathname, copy); });
    }
    return response;
  }, function () {
    return caches.match(url.pathname).then(function (cached) { return cached || Response.error(); });
  }));
});
