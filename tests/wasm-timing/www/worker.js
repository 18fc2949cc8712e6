// Times each launch of the memplay_wasm_timing module: RUNS calls of `run`, each with
// performance.now() around it. The first calls include V8 compiling the module's hot code; the
// minimum and median of the last ten are the simulator's warm speed.
const RUNS = 15;
const WARM = 10;

const ms = (value) => value.toFixed(1).padStart(8);

(async () => {
  try {
    const bytes = await (await fetch('memplay_wasm_timing.wasm')).arrayBuffer();
    const { instance } = await WebAssembly.instantiate(bytes, {});
    const wasm = instance.exports;
    const lines = [
      `${navigator.userAgent}`,
      `${'launch'.padEnd(46)} ${'steps'.padStart(10)}    first  warm min  warm median (ms)`,
    ];
    for (let index = 0; index < wasm.launch_count(); index++) {
      const name = new TextDecoder().decode(
        new Uint8Array(wasm.memory.buffer, wasm.name_pointer(index), wasm.name_length(index)));
      const times = [];
      let steps = 0n;
      for (let k = 0; k < RUNS; k++) {
        const start = performance.now();
        steps = wasm.run(index);
        times.push(performance.now() - start);
      }
      if (steps === 0n) {
        lines.push(`${name}: error, the launch did not simulate`);
        continue;
      }
      const warm = times.slice(RUNS - WARM).sort((a, b) => a - b);
      lines.push(`${name.padEnd(46)} ${String(steps).padStart(10)} ${ms(times[0])} ${ms(warm[0])} ${ms(warm[WARM / 2])}`);
    }
    postMessage(lines.join('\n') + '\n');
  } catch (error) {
    postMessage(`error: ${error}\n`);
  }
})();
