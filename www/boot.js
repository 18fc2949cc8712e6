// Starts the playground. Trunk's own loader is an inline <script>, which the page's
// Content-Security-Policy forbids (a hash of it would change with every build, as it names the
// hashed bundle files); Trunk.toml's pattern_script instead loads this fixed file and names the
// bundle's files in data attributes on its <script> element, so the policy allows scripts from
// the page's own origin only.
const tag = document.querySelector("script[data-memplay-js]");
const { default: init } = await import(tag.dataset.memplayJs);
await init({ module_or_path: tag.dataset.memplayWasm });
