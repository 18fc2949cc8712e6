// Starts the playground. Trunk's own loader is an inline <script>, which the page's
// Content-Security-Policy forbids (a hash of it would change with every build, as it names the
// hashed bundle files); Trunk.toml's pattern_script instead loads this fixed file and names the
// bundle's files in data attributes on its <script> element, so the policy allows scripts from
// the page's own origin only.
//
// If the bundle cannot be loaded (most often an iframe sandbox without allow-same-origin, whose
// opaque origin fails the module's and the wasm's CORS checks), the status line of index.html
// says so instead of leaving a blank frame.
const tag = document.querySelector("script[data-memplay-js]");
try {
  const { default: init } = await import(tag.dataset.memplayJs);
  await init({ module_or_path: tag.dataset.memplayWasm });
  // Offline use: the service worker (sw.js, written by the build) caches the site once the page
  // runs. Where there is none (an insecure origin, a private window that refuses it), the page
  // simply stays online-only.
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("sw.js").catch(() => {});
  }
} catch (error) {
  let status = document.getElementById("boot-status");
  if (status === null) {
    status = document.createElement("p");
    status.id = "boot-status";
    status.dataset.testid = "boot-status";
    document.body.prepend(status);
  }
  status.className = "boot-status failed";
  status.setAttribute("role", "alert");
  status.textContent =
    "memplay could not start here: its program failed to load (" + error + "). " +
    "Inside a course page's iframe, the sandbox must allow at least allow-scripts and " +
    "allow-same-origin. Open memplay in its own tab instead.";
  throw error;
}
