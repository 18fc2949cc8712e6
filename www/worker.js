// The simulation worker's script. It runs the page's own wasm module: the page names the module's
// JS and wasm files (whose names Trunk hashes) in the worker's name, `{"js": ..., "wasm": ...}`,
// and the module's main() finds itself in a worker and answers the page's requests (see
// crates/web/src/worker.rs). Only files of the worker's own origin are loaded.
//
// If the module cannot load, the worker says so in a text message, which the page shows in place
// of the results it waits for.
const sameOrigin = (files, name) => {
  const url = new URL(String(files[name] ?? ""), self.location.href);
  if (url.origin !== self.location.origin || url.href === self.location.href) {
    throw new Error(`the worker's name does not name the module's ${name} file`);
  }
  return url.href;
};
try {
  const files = JSON.parse(self.name);
  const { default: init } = await import(sameOrigin(files, "js"));
  await init({ module_or_path: sameOrigin(files, "wasm") });
} catch (error) {
  self.postMessage(`memplay's simulation worker could not load its program (${error})`);
}
