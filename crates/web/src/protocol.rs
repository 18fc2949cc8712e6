//! The messages between the page and its simulation worker, and what the worker does with each.
//!
//! The page numbers its requests (`Sequence`); every answer carries the number of the request it
//! answers, so the page can drop the answers of requests that a newer one has superseded. One
//! message is one launch: the launch the page shows (`Job::Launch`: report, prediction and what
//! simulating cost), or one launch of its sweep (`Job::SweepPoint`: only the predicted time). The
//! page sends the next job only when the worker has answered the last, so the worker never has a
//! queue of stale work (see `bridge` in the page).
//!
//! The worker says `FromWorker::Ready` once its module has started, and then answers each request
//! with `FromWorker::Answer`. A worker that could not start, or that stopped in the middle of a
//! job, is told by the browser's `error` event or by a text message from `www/worker.js`; the page
//! then drops the worker (see `bridge`).
//!
//! The answer to the launch the page shows also lists where each of the kernel's variables lives
//! (`memplay_sim::memory_spaces`): that needs the kernel preprocessed, parsed and checked, which
//! for a hostile kernel of a megabyte takes as long as its simulation's own front end, so it is
//! done here, off the page's thread, with the launch it belongs to.
//!
//! The data are memplay-sim's own plain types, serialized with serde into bincode's compact bytes
//! (`encode`, `decode`), so nothing here is specific to the browser and the tests run on the host.

use memplay_sim::kernel::Diagnostic;
use memplay_sim::memory_spaces::{declarations, Declaration};
use memplay_sim::simulate::{simulate, SimulationError, SimulationInput, SimulationReport};
use memplay_sim::timing::{predict, Prediction};
use serde::{Deserialize, Serialize};

/// The number of a request; a higher number is a newer request.
pub type Sequence = u64;

/// One launch for the worker to simulate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Job {
    /// The launch the page shows in full.
    Launch(SimulationInput),
    /// The launch the page compares it with, also in full.
    Compare(SimulationInput),
    /// The launch at one value of the sweep; `index` is the value's place in the sweep.
    SweepPoint {
        index: usize,
        input: SimulationInput,
    },
}

/// A launch of the sweep that ran: its report (with no warp traced) and prediction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweptLaunch {
    pub report: SimulationReport,
    pub prediction: Prediction,
}

/// What the page posts to the worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub seq: Sequence,
    pub job: Job,
}

/// A simulated launch as the page shows it: the report or the error, the prediction of a launch
/// that ran, and what simulating and predicting cost, measured in the worker; and the kernel's
/// variables with their memory spaces, or why the kernel does not compile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub result: Result<SimulationReport, SimulationError>,
    pub prediction: Option<Prediction>,
    pub elapsed_ms: f64,
    pub declarations: Result<Vec<Declaration>, Diagnostic>,
}

/// The worker's answer to one job.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Answer {
    /// Boxed: a report is some 600 bytes and its warp's trace (up to 4,096 accesses), a sweep
    /// point a few words.
    Launch(Box<Outcome>),
    /// The outcome of the launch it is compared with.
    Compare(Box<Outcome>),
    /// The predicted time of the sweep's launch at `index`, or why it does not run, and its
    /// report and prediction, from which a lesson's words name numbers at that value.
    SweepPoint {
        index: usize,
        time_ms: Result<f64, String>,
        launch: Option<Box<SweptLaunch>>,
    },
}

/// What the worker posts back: the answer to request `seq`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub seq: Sequence,
    pub answer: Answer,
}

/// Every message the worker posts to the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FromWorker {
    /// The worker's module has started and takes requests from now on.
    Ready,
    /// The answer to one request.
    Answer(Response),
}

/// A message as the bytes posted between the page and the worker.
pub fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    // Encoding into memory fails only for types serde cannot represent, and ours are plain data.
    // `serialize_into` a growing vector writes the same bytes as `bincode::serialize`, which
    // first walks the message once more to size the vector exactly: a second copy of every
    // message type's encoder in the module, for one allocation saved.
    let mut bytes = Vec::new();
    match bincode::serialize_into(&mut bytes, message) {
        Ok(()) => bytes,
        Err(_) => Vec::new(),
    }
}

/// Why bytes posted between the page and the worker are not a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The bytes are not a message of the expected type as `encode` writes it.
    NotAMessage,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::NotAMessage => {
                f.write_str("a message between the page and its worker did not decode")
            }
        }
    }
}

/// A message from the bytes that `encode` wrote. The codec's own error is dropped: its text
/// would name the codec's internals to nobody who can act on them, and formatting it links the
/// codec's and the I/O errors' messages into the page's module.
pub fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, DecodeError> {
    bincode::deserialize(bytes).map_err(|_| DecodeError::NotAMessage)
}

/// Simulates and predicts one launch, timing both with `now_ms` (the worker's clock), and lists
/// the kernel's variables. The listing is not in the time: the page reports what simulating cost.
pub fn run_launch(input: &SimulationInput, now_ms: impl Fn() -> f64) -> Outcome {
    let started = now_ms();
    let result = simulate(input);
    let prediction = result.as_ref().ok().map(predict);
    let elapsed_ms = now_ms() - started;
    Outcome {
        result,
        prediction,
        elapsed_ms,
        declarations: declarations(&input.source, &input.defines, &input.kernel),
    }
}

/// One launch of a sweep: its report and prediction, or why it does not run.
pub fn swept_launch(input: &SimulationInput) -> Result<SweptLaunch, String> {
    simulate(input)
        .map(|report| SweptLaunch {
            prediction: predict(&report),
            report,
        })
        .map_err(|error| error.to_string())
}

/// What the worker does with a request.
pub fn respond(request: Request, now_ms: impl Fn() -> f64) -> Response {
    let answer = match request.job {
        Job::Launch(input) => Answer::Launch(Box::new(run_launch(&input, now_ms))),
        Job::Compare(input) => Answer::Compare(Box::new(run_launch(&input, now_ms))),
        Job::SweepPoint { index, input } => {
            let launch = swept_launch(&input);
            Answer::SweepPoint {
                index,
                time_ms: launch
                    .as_ref()
                    .map(|launch| launch.prediction.time_ms)
                    .map_err(String::clone),
                launch: launch.ok().map(Box::new),
            }
        }
    };
    Response {
        seq: request.seq,
        answer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memplay_sim::kernel::{Dim3, Value};
    use memplay_sim::lesson_kernels::MATMUL;
    use memplay_sim::memory_spaces::MemorySpace;

    /// The tiled matmul of n = 64 with 16-wide tiles on the H100.
    fn tiled_matmul() -> SimulationInput {
        let mut input = SimulationInput::new(MATMUL, "mm_tiled", memplay_sim::device::h100());
        input.grid = Dim3::new(4, 4, 1);
        input.block = Dim3::new(16, 16, 1);
        input.regs = 32;
        input.defines = vec![
            ("TILE_WIDTH".to_string(), "16".to_string()),
            ("PAD".to_string(), "0".to_string()),
        ];
        input.args = vec![("n".to_string(), Value::Int(64))];
        input.buffers = ["a", "b", "c"]
            .iter()
            .map(|name| (name.to_string(), 64 * 64 * 4))
            .collect();
        input
    }

    /// Encodes and decodes as the page and the worker do.
    fn over_the_wire<T: Serialize + for<'de> Deserialize<'de>>(value: &T) -> T {
        decode(&encode(value)).expect("the message decodes")
    }

    #[test]
    fn a_message_is_encoded_into_the_same_bytes_as_bincode_serialize_writes() {
        let request = Request {
            seq: 7,
            job: Job::Launch(tiled_matmul()),
        };
        let sized = bincode::serialize(&request).expect("plain data");
        assert_eq!(encode(&request), sized);
        assert_eq!(encode(&FromWorker::Ready), vec![0, 0, 0, 0]);
    }

    #[test]
    fn a_launch_request_arrives_in_the_worker_as_it_was_sent() {
        let request = Request {
            seq: 7,
            job: Job::Launch(tiled_matmul()),
        };
        assert_eq!(over_the_wire(&request), request);
    }

    #[test]
    fn the_answer_to_a_launch_carries_its_number_report_and_prediction_unchanged() {
        let request = Request {
            seq: 3,
            job: Job::Launch(tiled_matmul()),
        };
        let clock = std::cell::Cell::new(10.0);
        let response = respond(request, || {
            clock.set(clock.get() + 2.5);
            clock.get()
        });
        assert_eq!(response.seq, 3);
        let Answer::Launch(outcome) = &response.answer else {
            panic!("a launch is answered with its outcome: {response:?}");
        };
        assert!(outcome.result.is_ok(), "{:?}", outcome.result);
        assert!(outcome.prediction.is_some());
        assert_eq!(outcome.elapsed_ms, 2.5);
        let shared: Vec<&str> = outcome
            .declarations
            .as_ref()
            .expect("the kernel compiles")
            .iter()
            .filter(|d| d.space == MemorySpace::Shared)
            .map(|d| d.name.as_str())
            .collect();
        assert_eq!(shared, ["sa", "sb"]);
        assert_eq!(over_the_wire(&response), response);
    }

    #[test]
    fn a_launch_that_does_not_compile_lists_no_variables_but_its_error() {
        let mut input = tiled_matmul();
        input.source = "__global__ void mm_tiled() { m; }".to_string();
        let outcome = run_launch(&input, || 0.0);
        assert_eq!(
            outcome.declarations.map_err(|error| error.to_string()),
            Err("1:30: 'm' is not declared".to_string())
        );
    }

    #[test]
    fn the_workers_ready_message_and_an_answer_arrive_as_sent() {
        let answer = FromWorker::Answer(Response {
            seq: 9,
            answer: Answer::SweepPoint {
                index: 1,
                time_ms: Ok(0.25),
                launch: None,
            },
        });
        assert_eq!(over_the_wire(&FromWorker::Ready), FromWorker::Ready);
        assert_eq!(over_the_wire(&answer), answer);
    }

    #[test]
    fn bytes_that_are_not_a_message_are_an_error_not_a_panic() {
        assert_eq!(
            decode::<FromWorker>(&[7, 0, 0, 0, 200]),
            Err(DecodeError::NotAMessage),
            "7 is no variant"
        );
        assert_eq!(decode::<Request>(&[]), Err(DecodeError::NotAMessage));
    }

    #[test]
    fn a_sweep_point_that_does_not_compile_is_answered_with_its_error() {
        let mut input = tiled_matmul();
        input.source = "__global__ void mm_tiled() { m; }".to_string();
        let response = respond(
            Request {
                seq: 4,
                job: Job::SweepPoint { index: 2, input },
            },
            || 0.0,
        );
        assert_eq!(
            response,
            Response {
                seq: 4,
                answer: Answer::SweepPoint {
                    index: 2,
                    time_ms: Err("1:30: 'm' is not declared".to_string()),
                    launch: None,
                },
            }
        );
    }
}
