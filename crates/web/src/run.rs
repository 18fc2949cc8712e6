//! A simulation as the page shows it: the worker's answer (`SimulationRun`) and the handle views
//! share it by (`Shared`). Plain data of its own module, so the views, the bridge to the worker and
//! the tests all take it from here rather than from one another.

use memplay_sim::kernel::Diagnostic;
use memplay_sim::memory_spaces::Declaration;
use memplay_sim::simulate::{SimulationError, SimulationInput, SimulationReport};
use memplay_sim::timing::Prediction;
use std::rc::Rc;

/// A simulation's outcome and its cost in wall-clock milliseconds, measured in the worker.
#[derive(Debug, PartialEq)]
pub struct SimulationRun {
    pub input: SimulationInput,
    pub result: Result<SimulationReport, SimulationError>,
    /// The timing model's prediction for a launch that ran.
    pub prediction: Option<Prediction>,
    /// What simulating and predicting cost in the browser's worker.
    pub elapsed_ms: f64,
    /// The kernel's variables and their memory spaces, or why the kernel does not compile.
    pub declarations: Result<Vec<Declaration>, Diagnostic>,
}

/// A value the views share, compared by identity: the worker's answer is made into one `Shared`
/// run, and views whose props hold the same one need not render again. Comparing two runs by
/// content walked their warp's trace (1,500 accesses for the guarded matmul) each time a view's
/// props were compared: 9.4 ms of the page's thread over twelve slider steps in Chromium. An
/// answer equal to the last one, which identity takes for a new one, only renders the same views
/// again.
#[derive(Debug)]
pub struct Shared<T>(Rc<T>);

impl<T> Shared<T> {
    pub fn new(value: T) -> Shared<T> {
        Shared(Rc::new(value))
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Shared<T> {
        Shared(Rc::clone(&self.0))
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Shared<T>) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}
