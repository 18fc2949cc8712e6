//! The page's side of the simulation worker: what to simulate next, and what to show meanwhile.
//!
//! Every simulation runs in the worker (`memplay_web::worker`), so the page stays responsive
//! however long a kernel runs. This module is the only part of the page that knows the worker.
//! `Scheduler` is the protocol's logic, pure and tested on the host; `use_simulations` is the Yew
//! hook that connects it to the worker and to the page's renders.
//!
//! The protocol: each change of the launch is a new request with a higher sequence number, and
//! the newest request wins. The page posts one job (one launch) at a time and the next only when
//! the worker has answered: while the worker is busy with a request that a newer one superseded,
//! only the newest request waits, so a slider dragged over twenty values runs at most the value
//! in flight and the last one. An answer to a superseded request is dropped. After the launch
//! itself, the sweep's launches follow one message each, so its chart fills in point by point; a
//! point whose launch ran before (the shown launch, or the last sweep's) is not run again. A
//! launch that fails is not swept, and keeps the last good launch's sweep. Until the newest
//! request is answered, the last answered run stays on the page and `progress` says what is
//! pending.

use crate::components::kernel_view::{Progress, SimulationRun};
use crate::components::time_sweep::TimePoint;
use memplay_sim::simulate::SimulationInput;
use memplay_web::protocol::{Answer, Job, Request, Response, Sequence};
use std::cell::RefCell;
use std::rc::Rc;
use yew::prelude::*;

/// The sweep of a request: the swept setting, its current value and the launch at each value.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepLaunches {
    /// The swept setting in words ("tile width").
    pub setting: &'static str,
    pub current: u32,
    pub launches: Vec<(u32, SimulationInput)>,
}

/// The sweep chart's data: the predicted time at each value, `None` while it is being simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepView {
    pub setting: &'static str,
    pub current: u32,
    pub points: Vec<TimePoint>,
}

/// What the page shows of the simulations.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Shown {
    /// The newest run the worker answered; `None` until the first answer.
    pub run: Option<Rc<SimulationRun>>,
    /// The sweep of the newest launch that ran without an error.
    pub sweep: Option<SweepView>,
    /// What the newest request still waits for; `None` when it is complete.
    pub progress: Option<Progress>,
}

/// The newest request and how far it has come.
#[derive(Debug)]
struct Wanted {
    seq: Sequence,
    launch: SimulationInput,
    sweep: SweepLaunches,
    /// Whether the worker has answered the launch.
    launched: bool,
    /// Whether the launch ran and its sweep (the scheduler's `sweep`) is being filled in.
    sweeping: bool,
}

/// Decides what the worker runs next and keeps what the page shows. Pure: it returns the request
/// to post, and the caller posts it.
#[derive(Debug, Default)]
pub struct Scheduler {
    newest: Sequence,
    wanted: Option<Wanted>,
    /// Whether a job is with the worker (at most one ever is).
    busy: bool,
    /// Predicted times of launches that ran: the shown launch and its sweep's.
    known: Vec<(SimulationInput, Result<f64, String>)>,
    run: Option<Rc<SimulationRun>>,
    sweep: Option<SweepView>,
}

impl Scheduler {
    /// A new setting: `launch` and its sweep supersede every earlier request. Returns the job to
    /// post now, if the worker is idle.
    pub fn want(&mut self, launch: SimulationInput, sweep: SweepLaunches) -> Option<Request> {
        let same = self
            .wanted
            .as_ref()
            .is_some_and(|wanted| wanted.launch == launch && wanted.sweep == sweep);
        if !same {
            self.newest += 1;
            self.wanted = Some(Wanted {
                seq: self.newest,
                launch,
                sweep,
                launched: false,
                sweeping: false,
            });
        }
        self.next_job()
    }

    /// The worker's answer to the job in flight. Returns the job to post next, if any.
    pub fn receive(&mut self, response: Response) -> Option<Request> {
        self.busy = false;
        let current = self
            .wanted
            .as_ref()
            .is_some_and(|wanted| wanted.seq == response.seq);
        // An answer to a superseded request is dropped: the newest request's job goes next.
        if current {
            match response.answer {
                Answer::Launch(outcome) => self.launched(*outcome),
                Answer::SweepPoint { index, time_ms } => self.swept(index, time_ms),
            }
        }
        self.next_job()
    }

    /// The launch of the newest request ran (or failed): show it, and start its sweep if it ran.
    fn launched(&mut self, outcome: memplay_web::protocol::Outcome) {
        let Some(wanted) = self.wanted.as_mut() else {
            return;
        };
        wanted.launched = true;
        let time_ms = match (&outcome.result, &outcome.prediction) {
            (Ok(_), Some(prediction)) => Some(prediction.time_ms),
            _ => None,
        };
        self.run = Some(Rc::new(SimulationRun {
            input: wanted.launch.clone(),
            result: outcome.result,
            prediction: outcome.prediction,
            elapsed_ms: outcome.elapsed_ms,
        }));
        // A launch that fails is not swept: its sweep would fail the same way, several times
        // over. The last good launch's sweep and times stay.
        let Some(time_ms) = time_ms else {
            return;
        };
        self.known.retain(|(input, _)| *input != wanted.launch);
        self.known.push((wanted.launch.clone(), Ok(time_ms)));
        let known = &self.known;
        let points = wanted
            .sweep
            .launches
            .iter()
            .map(|(value, input)| TimePoint {
                value: *value,
                time_ms: known
                    .iter()
                    .find(|(known_input, _)| known_input == input)
                    .map(|(_, time)| time.clone()),
            })
            .collect();
        // Only this sweep's times can be used again (moving along the swept setting); the rest
        // are forgotten, so what is kept stays as small as one sweep.
        let launches = &wanted.sweep.launches;
        self.known
            .retain(|(input, _)| launches.iter().any(|(_, launch)| launch == input));
        self.sweep = Some(SweepView {
            setting: wanted.sweep.setting,
            current: wanted.sweep.current,
            points,
        });
        wanted.sweeping = true;
    }

    /// One point of the newest request's sweep ran.
    fn swept(&mut self, index: usize, time_ms: Result<f64, String>) {
        let (Some(wanted), Some(sweep)) = (self.wanted.as_ref(), self.sweep.as_mut()) else {
            return;
        };
        let (Some((_, input)), Some(point)) = (
            wanted.sweep.launches.get(index),
            sweep.points.get_mut(index),
        ) else {
            return;
        };
        if wanted.sweeping {
            point.time_ms = Some(time_ms.clone());
            self.known.push((input.clone(), time_ms));
        }
    }

    /// The newest request's next job, unless the worker is busy or the request is complete.
    fn next_job(&mut self) -> Option<Request> {
        if self.busy {
            return None;
        }
        let wanted = self.wanted.as_ref()?;
        let job = if !wanted.launched {
            Job::Launch(wanted.launch.clone())
        } else if wanted.sweeping {
            let index = self
                .sweep
                .as_ref()?
                .points
                .iter()
                .position(|point| point.time_ms.is_none())?;
            Job::SweepPoint {
                index,
                input: wanted.sweep.launches.get(index)?.1.clone(),
            }
        } else {
            return None;
        };
        self.busy = true;
        Some(Request {
            seq: wanted.seq,
            job,
        })
    }

    /// What the newest request still waits for.
    pub fn progress(&self) -> Option<Progress> {
        let wanted = self.wanted.as_ref()?;
        if !wanted.launched {
            return Some(Progress::Launch);
        }
        let points = &self.sweep.as_ref().filter(|_| wanted.sweeping)?.points;
        let done = points
            .iter()
            .filter(|point| point.time_ms.is_some())
            .count();
        (done < points.len()).then_some(Progress::Sweep {
            done,
            total: points.len(),
        })
    }

    /// What the page shows now.
    pub fn shown(&self) -> Shown {
        Shown {
            run: self.run.clone(),
            sweep: self.sweep.clone(),
            progress: self.progress(),
        }
    }
}

/// The worker's handle, once the first request has started it.
type WorkerSlot =
    Rc<RefCell<Option<gloo::worker::WorkerBridge<memplay_web::worker::SimulationWorker>>>>;

/// Posts `request` to the worker, starting the worker on the first request. Answers go to the
/// scheduler, whose next job is posted in turn, and each answer re-renders the page.
fn post(
    worker: &WorkerSlot,
    scheduler: &Rc<RefCell<Scheduler>>,
    rerender: &UseForceUpdateHandle,
    request: Option<Request>,
) {
    use gloo::worker::Spawnable;
    let Some(request) = request else {
        return;
    };
    let mut slot = worker.borrow_mut();
    let bridge = slot.get_or_insert_with(|| {
        let (worker, scheduler, rerender) = (worker.clone(), scheduler.clone(), rerender.clone());
        memplay_web::worker::SimulationWorker::spawner()
            .callback(move |response: Response| {
                let next = scheduler.borrow_mut().receive(response);
                if let Some(next) = next {
                    if let Some(bridge) = worker.borrow().as_ref() {
                        bridge.send(next);
                    }
                }
                rerender.force_update();
            })
            .spawn_with_loader(memplay_web::worker::LOADER)
    });
    bridge.send(request);
}

/// Simulates `launch` and then its sweep in the worker, and returns what to show: the newest
/// answered run, marked as updating while a newer request is pending.
#[hook]
pub fn use_simulations(launch: SimulationInput, sweep: SweepLaunches) -> Shown {
    let scheduler = use_mut_ref(Scheduler::default);
    let worker: WorkerSlot = use_mut_ref(|| None);
    let rerender = use_force_update();
    {
        let scheduler = scheduler.clone();
        let rerender = rerender.clone();
        use_effect_with((launch, sweep), move |(launch, sweep)| {
            let request = scheduler.borrow_mut().want(launch.clone(), sweep.clone());
            post(&worker, &scheduler, &rerender, request);
            // The pending request shows as "updating" from the next render on.
            rerender.force_update();
        });
    }
    let shown = scheduler.borrow().shown();
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lessons::LessonId;
    use crate::state::State;
    use memplay_sim::kernel::Span;
    use memplay_sim::simulate::SimulationError;
    use memplay_web::protocol::{respond, Outcome};

    /// The launch and the tile-width sweep of the tiled matmul lesson at `tile`.
    fn request_at(tile: u32, source: Option<&str>) -> (SimulationInput, SweepLaunches) {
        let state = State {
            lesson: LessonId::MatmulTiled,
            tile,
            edited_source: source.map(str::to_string),
            ..State::default()
        };
        let sweep = state.lesson.sweep();
        let launches = [8, 16]
            .into_iter()
            .map(|value| {
                let at = sweep.with(&state, value);
                (value, state.lesson.launch(&at, state.source()))
            })
            .collect();
        (
            state.lesson.launch(&state, state.source()),
            SweepLaunches {
                setting: sweep.label(),
                current: tile,
                launches,
            },
        )
    }

    /// An answer without simulating: a launch that spent its budget, or a sweep point of 2 ms.
    fn quick_answer(request: &Request) -> Response {
        let answer = match &request.job {
            Job::Launch(_) => Answer::Launch(Box::new(Outcome {
                result: Err(SimulationError::StepBudget {
                    steps: 2,
                    budget: 1,
                    span: Span::default(),
                }),
                prediction: None,
                elapsed_ms: 1.0,
            })),
            Job::SweepPoint { index, .. } => Answer::SweepPoint {
                index: *index,
                time_ms: Ok(2.0),
            },
        };
        Response {
            seq: request.seq,
            answer,
        }
    }

    /// Runs every job the scheduler asks for through the real simulator until it asks for none,
    /// and returns the jobs, as (sequence, "launch" or the sweep's index).
    fn run_to_the_end(scheduler: &mut Scheduler, first: Option<Request>) -> Vec<(u64, String)> {
        let mut jobs = Vec::new();
        let mut next = first;
        while let Some(request) = next {
            jobs.push((
                request.seq,
                match &request.job {
                    Job::Launch(_) => "launch".to_string(),
                    Job::SweepPoint { index, .. } => format!("point {index}"),
                },
            ));
            next = scheduler.receive(respond(request, || 0.0));
        }
        jobs
    }

    fn jobs(list: &[(u64, &str)]) -> Vec<(u64, String)> {
        list.iter()
            .map(|(seq, job)| (*seq, job.to_string()))
            .collect()
    }

    #[test]
    fn a_launch_runs_first_and_its_sweep_fills_in_after_it_reusing_the_launch_itself() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let first = scheduler.want(launch, sweep);
        assert_eq!(scheduler.progress(), Some(Progress::Launch));
        // The launch at tile 16 is the sweep's second point: only the first one runs.
        assert_eq!(
            run_to_the_end(&mut scheduler, first),
            jobs(&[(1, "launch"), (1, "point 0")])
        );
        let shown = scheduler.shown();
        assert_eq!(shown.progress, None);
        let run = shown.run.expect("the launch is shown");
        assert!(run.result.is_ok());
        let sweep = shown.sweep.expect("the sweep is shown");
        assert_eq!(sweep.current, 16);
        assert!(sweep
            .points
            .iter()
            .all(|point| matches!(point.time_ms, Some(Ok(_)))));
        let launch_time = run.prediction.as_ref().expect("a prediction").time_ms;
        assert_eq!(sweep.points[1].time_ms, Some(Ok(launch_time)));
    }

    #[test]
    fn requests_made_while_the_worker_is_busy_coalesce_to_the_newest() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let in_flight = scheduler.want(launch, sweep).expect("the worker is idle");
        // A slider moves over three more values while the first launch runs: nothing is posted.
        for tile in [17, 18, 8] {
            let (launch, sweep) = request_at(tile, None);
            assert_eq!(scheduler.want(launch, sweep), None);
            assert_eq!(scheduler.progress(), Some(Progress::Launch));
        }
        // The first answer is stale and dropped; the newest request (tile 8, number 4) goes next.
        let next = scheduler.receive(quick_answer(&in_flight));
        assert!(
            scheduler.shown().run.is_none(),
            "a stale answer is not shown"
        );
        let (newest, _) = request_at(8, None);
        assert_eq!(
            next,
            Some(Request {
                seq: 4,
                job: Job::Launch(newest),
            })
        );
        assert_eq!(
            run_to_the_end(&mut scheduler, next),
            jobs(&[(4, "launch"), (4, "point 1")])
        );
    }

    #[test]
    fn moving_along_the_swept_setting_runs_no_sweep_point_again() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let first = scheduler.want(launch, sweep);
        run_to_the_end(&mut scheduler, first);
        let (launch, sweep) = request_at(8, None);
        let second = scheduler.want(launch, sweep);
        assert_eq!(
            run_to_the_end(&mut scheduler, second),
            jobs(&[(2, "launch")])
        );
        assert_eq!(scheduler.shown().sweep.map(|sweep| sweep.current), Some(8));
    }

    #[test]
    fn a_kernel_error_keeps_the_last_good_sweep_and_the_fix_reuses_it() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let first = scheduler.want(launch, sweep);
        run_to_the_end(&mut scheduler, first);
        let good_sweep = scheduler.shown().sweep;

        let (broken, sweep) = request_at(16, Some("__global__ void mm_tiled() { m; }"));
        let second = scheduler.want(broken, sweep);
        assert_eq!(
            run_to_the_end(&mut scheduler, second),
            jobs(&[(2, "launch")])
        );
        let shown = scheduler.shown();
        assert!(shown.run.is_some_and(|run| run.result.is_err()));
        assert_eq!(shown.sweep, good_sweep);
        assert_eq!(shown.progress, None);

        let (launch, sweep) = request_at(16, None);
        let third = scheduler.want(launch, sweep);
        assert_eq!(
            run_to_the_end(&mut scheduler, third),
            jobs(&[(3, "launch")])
        );
        assert_eq!(scheduler.shown().sweep, good_sweep);
    }

    #[test]
    fn a_newer_request_during_the_sweep_drops_the_rest_of_the_old_sweep() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        let first = scheduler.want(launch, sweep).expect("the worker is idle");
        let point = scheduler
            .receive(respond(first, || 0.0))
            .expect("the sweep's first point follows");
        assert_eq!(
            scheduler.progress(),
            Some(Progress::Sweep { done: 1, total: 2 })
        );
        let (launch, sweep) = request_at(16, Some("__global__ void mm_tiled() { m; }"));
        assert_eq!(scheduler.want(launch, sweep), None);
        // The old sweep's point comes back and is dropped; the new launch goes next.
        let next = scheduler.receive(quick_answer(&point));
        assert!(matches!(
            next,
            Some(Request {
                seq: 2,
                job: Job::Launch(_)
            })
        ));
        assert_eq!(scheduler.progress(), Some(Progress::Launch));
    }

    #[test]
    fn asking_again_for_the_request_in_flight_posts_nothing_more() {
        let mut scheduler = Scheduler::default();
        let (launch, sweep) = request_at(16, None);
        assert!(scheduler.want(launch.clone(), sweep.clone()).is_some());
        assert_eq!(scheduler.want(launch, sweep), None);
    }
}
