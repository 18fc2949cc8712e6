// The simulation worker's script. It runs the page's own wasm module: the page names the module's
// JS and wasm files (whose names Trunk hashes) in this script's URL, `worker.js?js=...&wasm=...`,
// and the module's main() finds itself in a worker and answers the page's requests (see
// crates/web/src/worker.rs). Only files of the worker's own origin are loaded.
//
// If the module cannot load, the worker says so in a text message, which the page shows in place
// of the results it waits for.
const params = new URL(self.location.href).searchParams;
const sameOrigin = (name) => {
  const url = new URL(params.get(name) ?? "", self.location.href);
  if (url.origin !== self.location.origin) {
    throw new Error(`the ${name} file is not on the page's own origin`);
  }
  return url.href;
};
try {
  const { default: init } = await import(sameOrigin("js"));
  await init({ module_or_path: sameOrigin("wasm") });
} catch (error) {
  self.postMessage(`memplay's simulation worker could not load its program (${error})`);
}
