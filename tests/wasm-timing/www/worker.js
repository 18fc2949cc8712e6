// Times each launch of the memplay_wasm_timing module with performance.now() around each call of
// `run`. The very first call of each includes V8 compiling the module's code ("first"); then every
// launch runs WARM_UP times more, so that V8's optimising tier has compiled the hot functions of
// all of them, and only then RUNS times each, whose minimum and median are the simulator's warm
// speed.
const WARM_UP = 5;
const RUNS = 12;

const ms = (value) => value.toFixed(1).padStart(9);

const timed = (wasm, index) => {
  const start = performance.now();
  const steps = wasm.run(index);
  return [performance.now() - start, steps];
};

(async () => {
  try {
    const bytes = await (await fetch('memplay_wasm_timing.wasm')).arrayBuffer();
    const { instance } = await WebAssembly.instantiate(bytes, {});
    const wasm = instance.exports;
    const count = wasm.launch_count();
    const first = [];
    for (let index = 0; index < count; index++) first.push(timed(wasm, index));
    for (let k = 0; k < WARM_UP; k++) {
      for (let index = 0; index < count; index++) timed(wasm, index);
    }
    const lines = [
      `${navigator.userAgent}`,
      `${'launch'.padEnd(46)} ${'steps'.padStart(10)}     first  warm min  warm median (ms)`,
    ];
    for (let index = 0; index < count; index++) {
      const name = new TextDecoder().decode(
        new Uint8Array(wasm.memory.buffer, wasm.name_pointer(index), wasm.name_length(index)));
      const [firstTime, steps] = first[index];
      if (steps === 0n) {
        lines.push(`${name}: error, the launch did not simulate`);
        continue;
      }
      const times = [];
      for (let k = 0; k < RUNS; k++) times.push(timed(wasm, index)[0]);
      times.sort((a, b) => a - b);
      lines.push(`${name.padEnd(46)} ${String(steps).padStart(10)} ${ms(firstTime)} ${ms(times[0])} ${ms(times[RUNS / 2])}`);
    }
    postMessage(lines.join('\n') + '\n');
  } catch (error) {
    postMessage(`error: ${error}\n`);
  }
})();
