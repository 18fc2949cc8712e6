// memplay's service worker: it keeps the built site in the browser's cache so that, after the
// first visit, a reload and every lesson work with the network off.
//
// This file is a template: the build (a Trunk post-build hook, `cargo xtask service-worker`)
// writes it into the site as sw.js with BUILD set to a hash of every built file and FILES to their
// names. A new deploy therefore changes sw.js itself, which the browser notices on the next visit:
// the new worker caches the new files under a new name and deletes the old caches once it takes
// over. Every name is relative to this file, so the site works under any sub-path of a host.
const BUILD = "development";
const FILES = [];
const CACHE = `memplay-${BUILD}`;

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches
      .open(CACHE)
      // `reload` skips the HTTP cache, so the files cached are those of this build.
      .then((cache) => cache.addAll(["./", ...FILES].map((file) => new Request(file, { cache: "reload" }))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) =>
        Promise.all(
          names
            .filter((name) => name.startsWith("memplay-") && name !== CACHE)
            .map((name) => caches.delete(name)),
        ),
      )
      .then(() => self.clients.claim()),
  );
});

// The page itself (a navigation) comes from the network when there is one, so a new deploy shows
// at once, and from the cache when there is none. Every other file of the build comes from the
// cache, whatever its query: the bundle's names carry a hash of their content, so a cached file is
// always the one its page names. Anything else goes to the network as usual.
self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET" || new URL(request.url).origin !== self.location.origin) {
    return;
  }
  // A cached answer is a copy of the file's own answer with the request's URL: the page's URL
  // keeps its query (the settings), as it does from the network.
  const cached = () =>
    caches
      .open(CACHE)
      .then((cache) => cache.match(request, { ignoreSearch: true }))
      .then((response) =>
        response === undefined || response.url === request.url
          ? response
          : new Response(response.body, {
              status: response.status,
              statusText: response.statusText,
              headers: response.headers,
            }),
      );
  // A lesson file a link names (`lesson-url=`, a `.txt` of the site) is no file of the build: it
  // comes from the network when there is one, so an instructor's edit shows at once, and is kept,
  // so the lesson works offline after one visit.
  if (new URL(request.url).pathname.endsWith(".txt")) {
    event.respondWith(
      fetch(request)
        .then((response) => {
          if (response.ok) {
            const copy = response.clone();
            caches.open(CACHE).then((cache) => cache.put(request, copy));
          }
          return response;
        })
        .catch((error) =>
          caches
            .open(CACHE)
            .then((cache) => cache.match(request))
            .then((response) => response ?? Promise.reject(error)),
        ),
    );
    return;
  }
  if (request.mode === "navigate") {
    event.respondWith(
      fetch(request).catch((error) => cached().then((response) => response ?? Promise.reject(error))),
    );
  } else {
    event.respondWith(cached().then((response) => response ?? fetch(request)));
  }
});
