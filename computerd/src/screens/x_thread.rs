//! A screen's X thread: the one owner of its X connection, capturer and
//! keyboard state. Callers hand it jobs and await their answers; it runs
//! them one at a time in the order they came, so an observe, an act's
//! actions, a text view's window list and a handoff's facts never
//! interleave on the screen, and no async thread ever waits on X.

use super::ScreenX;
use computer_protocol::ScreenNumber;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::mpsc;

type Job = Box<dyn FnOnce(&mut ScreenX) + Send>;

/// The sending side of a screen's X thread. Dropping it ends the thread
/// once the jobs already sent have run; the X connection closes with it.
pub struct XThread {
    jobs: mpsc::Sender<Job>,
}

impl XThread {
    /// Starts the thread that owns `x` from now on.
    pub fn start(screen: ScreenNumber, mut x: ScreenX) -> std::io::Result<XThread> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name(format!("x-screen-{screen}"))
            .spawn(move || {
                for job in queue {
                    job(&mut x);
                }
            })?;
        Ok(XThread { jobs })
    }

    /// Runs `f` on the X thread after the jobs sent before it. A panic in
    /// `f` is raised again here, in the caller, and the thread goes on with
    /// the next job. A caller that stops waiting does not stop the job.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut ScreenX) -> T + Send + 'static,
    ) -> T {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |x| {
            let result = catch_unwind(AssertUnwindSafe(|| f(x)));
            let _ = answer.send(result);
        });
        self.jobs
            .send(job)
            .expect("a screen's X thread lives as long as its XThread");
        match answered
            .await
            .expect("the X thread answers every job it takes")
        {
            Ok(value) => value,
            Err(panic) => resume_unwind(panic),
        }
    }
}
