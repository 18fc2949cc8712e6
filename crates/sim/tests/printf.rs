//! Output from a kernel: `printf`'s lines in block order and lane order, bounded; the simulated
//! clock; `assert` naming the thread that fails it; and that every warp and iteration that
//! output depends on runs, where a kernel without output would reuse them.

mod common;

use common::{h100_launch, one_warp_buffers};
use memplay_sim::device::g80;
use memplay_sim::kernel::DiagnosticKind;
use memplay_sim::simulate::{self, SimulationError};

#[test]
fn each_thread_prints_its_line_in_block_order_then_lane_order() {
    let source = r#"__global__ void hello(float* a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < 2) printf("block %d thread %d: %5.2f %s\n", blockIdx.x, threadIdx.x, a[i] * 0.0f + 1.5f, "ok");
}
"#;
    let input = h100_launch(source, "hello", [3, 1], [64, 1], &[("a", 768)], &[]);
    let report = simulate::simulate(&input).unwrap();
    let output = report.printf.expect("the kernel prints");
    assert_eq!(
        output.lines,
        [
            "block 0 thread 0:  1.50 ok",
            "block 0 thread 1:  1.50 ok",
            "block 1 thread 0:  1.50 ok",
            "block 1 thread 1:  1.50 ok",
            "block 2 thread 0:  1.50 ok",
            "block 2 thread 1:  1.50 ok",
        ]
    );
    assert_eq!(output.lines_not_shown, 0);
}

#[test]
fn a_warp_that_reuse_would_skip_still_prints_and_the_counters_stay() {
    // Warps 1 to 7 do warp 0's work at other addresses: without output, they are shown alike
    // and do not run.
    let quiet = "__global__ void copy(const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int k = 0; k < 4; k++) out[i] += in[i] * k;
}
";
    let loud = quiet.replace(
        "out[i] += in[i] * k;",
        "{ out[i] += in[i] * k; if (threadIdx.x % 32 == 0 && k == 3) printf(\"warp %d\\n\", threadIdx.x / 32); }",
    );
    let launch = |source: &str| {
        h100_launch(
            source,
            "copy",
            [1, 1],
            [256, 1],
            &[("in", 1024), ("out", 1024)],
            &[],
        )
    };
    let quiet_report = simulate::simulate(&launch(quiet)).unwrap();
    let loud_report = simulate::simulate(&launch(&loud)).unwrap();
    let output = loud_report.printf.expect("the kernel prints");
    let expected: Vec<String> = (0..8).map(|warp| format!("warp {warp}")).collect();
    assert_eq!(output.lines, expected);
    assert_eq!(quiet_report.printf, None);
    assert_eq!(
        quiet_report.counters.global_ld_requests,
        loud_report.counters.global_ld_requests
    );
    assert_eq!(
        quiet_report.counters.global_st_requests,
        loud_report.counters.global_st_requests
    );
}

#[test]
fn output_past_64_lines_is_counted_not_shown() {
    let source = r#"__global__ void chatty() {
  printf("thread %d\n", threadIdx.x);
}
"#;
    let input = h100_launch(source, "chatty", [2, 1], [100, 1], &[], &[]);
    let output = simulate::simulate(&input).unwrap().printf.unwrap();
    assert_eq!(output.lines.len(), 64);
    assert_eq!(output.lines[63], "thread 63");
    assert_eq!(output.lines_not_shown, 200 - 64);
}

#[test]
fn the_clock_counts_the_instructions_issued_between_two_readings() {
    let timed = |body: &str| {
        let source = format!(
            "__global__ void timed(long long* t, float* a) {{
  float x = a[threadIdx.x];
  long long start = clock64();
{body}
  long long end = clock64();
  t[threadIdx.x] = end - start;
  a[threadIdx.x] = x;
}}
"
        );
        let buffers = one_warp_buffers(&source, "timed", &[("t", 256), ("a", 128)]);
        let ticks: Vec<i64> = buffers[0]
            .chunks_exact(8)
            .map(|bytes| i64::from_le_bytes(bytes.try_into().unwrap()))
            .collect();
        assert!(ticks.iter().all(|&t| t == ticks[0]), "{ticks:?}");
        ticks[0]
    };
    let one = timed("  x = fmaf(x, x, 1.0f);");
    let five = timed(&"  x = fmaf(x, x, 1.0f);\n".repeat(5));
    // Each `fmaf` is one FFMA: four more of them, four more ticks.
    assert!(one >= 1, "{one}");
    assert_eq!(five - one, 4);
}

#[test]
fn a_failed_assertion_names_its_block_and_thread() {
    let source = "__global__ void checked(const int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(i < n);
}
";
    let input = h100_launch(
        source,
        "checked",
        [2, 1],
        [32, 1],
        &[("a", 256)],
        &[("n", 40)],
    );
    let Err(SimulationError::Kernel(error)) = simulate::simulate(&input) else {
        panic!("the assertion fails in block 1");
    };
    assert_eq!(error.kind, DiagnosticKind::AssertionFailed);
    assert_eq!(error.span.line, 3);
    assert_eq!(
        error.message,
        "the assertion failed in block (1, 0, 0), thread (8, 0, 0)"
    );
}

#[test]
fn printf_needs_compute_capability_2_0() {
    let source = "__global__ void hello() {\n  printf(\"hi\\n\");\n}\n";
    let mut input = h100_launch(source, "hello", [1, 1], [32, 1], &[], &[]);
    input.device = g80();
    let Err(SimulationError::Unsupported(unsupported)) = simulate::simulate(&input) else {
        panic!("the G80 has no device printf");
    };
    assert!(
        unsupported
            .to_string()
            .starts_with("'printf' (formatted output from a kernel) needs compute capability 2.0"),
        "{unsupported}"
    );
}
