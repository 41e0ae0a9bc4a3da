//! The browsers of all screens: one started when a screen first needs it,
//! closed with its screen (so its profile is saved), a crashed one noticed
//! and replaced on the next request, and the cookie sync between them.

use super::cdp::{Cdp, CdpError};
use super::chromium::{user_data_dir, Chromium, ChromiumArgs, ChromiumError};
use super::cookie_read::{read_answer, CookieRead, NoCookiesArray};
use super::cookie_write::write_cookies;
use super::jar::{BrowserView, Jar, Writes};
use super::page::{self, PageLoad};
use super::profile::{ProfileClone, Template};
use crate::screen_facts::ScreenEnv;
use crate::screens::{Companion, Screen};
use computer_protocol::ScreenNumber;
use computer_protocol::ScreenSize;
use parking_lot::Mutex;
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often the cookies of running browsers are compared and shared.
pub const SYNC_EVERY: Duration = Duration::from_secs(2);

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    #[error(transparent)]
    Chromium(#[from] ChromiumError),
    #[error("could not prepare the profile of screen {screen}'s browser in `{}`: {source}", dir.display())]
    Profile {
        screen: ScreenNumber,
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("the browser of screen {screen} stopped answering DevTools: {source}; the next request starts a new one")]
    DevTools {
        screen: ScreenNumber,
        source: CdpError,
    },
    #[error("computerd is shutting down; no browser starts now")]
    ShuttingDown,
}

/// Where browsers live and what they inherit.
#[derive(Debug, Clone)]
pub struct BrowserSettings {
    pub home: PathBuf,
    /// Screen N's DevTools listen on `devtools_port_base + N`.
    pub devtools_port_base: u16,
    /// Variables for every browser (the launcher's address and token).
    pub env: Vec<(String, String)>,
}

/// What a browser needs to know of its screen.
#[derive(Debug, Clone, Copy)]
pub struct BrowserScreen {
    pub number: ScreenNumber,
    pub display: u32,
    pub size: ScreenSize,
    /// The pid of the screen's Xvnc: a later screen with the same number
    /// is another screen, and an old browser must not serve it.
    pub xvnc_pid: i32,
    /// What every process on the screen gets (`DISPLAY`, its session bus).
    pub env: ScreenEnv,
}

impl BrowserScreen {
    pub fn of(screen: &Screen) -> BrowserScreen {
        BrowserScreen {
            number: screen.number,
            display: screen.display_number,
            size: screen.size,
            xvnc_pid: screen.xvnc_pid(),
            env: screen.env(),
        }
    }
}

/// One screen's running Chromium.
#[derive(Debug)]
pub struct Browser {
    pub screen: BrowserScreen,
    chromium: Chromium,
    profile: ProfileClone,
    /// What the cookie sync last knew of this browser's cookies.
    view: tokio::sync::Mutex<BrowserView>,
    /// The first tab is still the blank one it started with: the first
    /// page opens there instead of beside it.
    fresh: AtomicBool,
}

impl Browser {
    /// Its process runs. A DevTools socket that ended is opened again by
    /// the next command (see [`Cdp`]); a browser that no longer answers is
    /// what [`Browser::answers`] finds.
    pub fn is_running(&self) -> bool {
        self.chromium.process.exit_status().is_none()
    }

    /// Asks DevTools for the version: a browser that crashed a moment ago
    /// may not be known as exited yet, but it no longer answers. A busy one
    /// (still sending a page's huge answer, on a loaded machine) answers
    /// late, so it gets a command's whole deadline before it is given up.
    pub async fn answers(&self) -> bool {
        self.is_running()
            && self
                .cdp()
                .call("Browser.getVersion", json!({}))
                .await
                .is_ok()
    }

    pub fn pid(&self) -> i32 {
        self.chromium.process.pid
    }

    pub fn devtools_port(&self) -> u16 {
        self.chromium.devtools_port
    }

    pub fn cdp(&self) -> &Cdp {
        &self.chromium.cdp
    }

    /// Opens `url` in the first, still blank tab, or in a new tab, brings
    /// that tab to the front, and waits for it to load.
    pub async fn open(&self, url: &str, deadline: Duration) -> Result<PageLoad, BrowserError> {
        let reuse_blank = self.fresh.swap(false, Ordering::SeqCst);
        page::open(self.cdp(), url, reuse_blank, deadline)
            .await
            .map_err(|source| BrowserError::DevTools {
                screen: self.screen.number,
                source,
            })
    }
}

/// Every screen's browser, the template profile and the cookie jar.
#[derive(Debug)]
pub struct Browsers {
    settings: BrowserSettings,
    template: Arc<Template>,
    jar_path: PathBuf,
    /// Held while cookies move between the jar and a browser, so a start
    /// and a sync round never interleave.
    jar: tokio::sync::Mutex<Jar>,
    running: Mutex<HashMap<ScreenNumber, Arc<Browser>>>,
    /// One start at a time per screen: two requests that both need the
    /// browser get the same one.
    starts: Mutex<HashMap<ScreenNumber, Arc<tokio::sync::Mutex<()>>>>,
    shutting_down: AtomicBool,
}

impl Browsers {
    pub fn new(settings: BrowserSettings) -> Browsers {
        let jar_path = jar_path(&settings.home);
        let (jar, warning) = Jar::load(&jar_path);
        if let Some(warning) = warning {
            tracing::warn!("{warning}");
        }
        Browsers {
            template: Arc::new(Template::in_home(&settings.home)),
            settings,
            jar_path,
            jar: tokio::sync::Mutex::new(jar),
            running: Mutex::default(),
            starts: Mutex::default(),
            shutting_down: AtomicBool::new(false),
        }
    }

    /// The running browser of `number`, if any.
    pub fn get(&self, number: ScreenNumber) -> Option<Arc<Browser>> {
        self.running_map().get(&number).cloned()
    }

    /// How many browsers run now.
    pub fn count(&self) -> usize {
        self.running_map().len()
    }

    /// The screen's browser, started when none runs (or the last one
    /// crashed). Returns it and whether it was started now.
    pub async fn ensure(
        &self,
        screen: BrowserScreen,
    ) -> Result<(Arc<Browser>, bool), BrowserError> {
        let start_lock = {
            let mut starts = self.starts.lock();
            Arc::clone(starts.entry(screen.number).or_default())
        };
        let _one_start = start_lock.lock().await;
        if let Some(browser) = self.get(screen.number) {
            if browser.screen.xvnc_pid == screen.xvnc_pid && browser.answers().await {
                return Ok((browser, false));
            }
            self.retire(&browser).await;
        }
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err(BrowserError::ShuttingDown);
        }
        let browser = Arc::new(self.start(screen).await?);
        self.running_map()
            .insert(screen.number, Arc::clone(&browser));
        tracing::info!(screen = %screen.number, pid = browser.pid(), port = browser.devtools_port(), "browser started");
        Ok((browser, true))
    }

    async fn start(&self, screen: BrowserScreen) -> Result<Browser, BrowserError> {
        let dir = user_data_dir(&self.settings.home, screen.number.0);
        let profile = {
            let (template, dir) = (Arc::clone(&self.template), dir.clone());
            crate::blocking::run(move || template.clone_to(&dir)).await
        }
        .map_err(|source| BrowserError::Profile {
            screen: screen.number,
            dir: dir.clone(),
            source,
        })?;
        let chromium = Chromium::start(&ChromiumArgs {
            screen: screen.number.0,
            screen_env: screen.env,
            size: screen.size,
            user_data_dir: &dir,
            devtools_port: self.settings.devtools_port_base + u16::from(screen.number.0),
            home: &self.settings.home,
            env: &self.settings.env,
        })
        .await?;
        // The jar goes in before the first page, so that page is signed in.
        // A cookie the browser refuses fails only itself, and a failed write
        // never fails the start: the browser then starts signed out and the
        // next sync round tries again.
        let view = {
            let jar = self.jar.lock().await;
            let seed = Writes {
                set: jar.live(now_ms()),
                delete: Vec::new(),
            };
            let mut view = BrowserView::new();
            if !seed.is_empty() {
                write_into(screen.number, &chromium.cdp, &mut view, &seed).await;
            }
            view
        };
        Ok(Browser {
            screen,
            chromium,
            profile,
            view: tokio::sync::Mutex::new(view),
            fresh: AtomicBool::new(true),
        })
    }

    /// Closes screen `number`'s browser cleanly, keeping its logins and
    /// what it changed in the template. Called before the screen closes.
    pub async fn close(&self, number: ScreenNumber) {
        let Some(browser) = self.running_map().remove(&number) else {
            return;
        };
        // A login made just before the close must not be lost.
        if browser.is_running() {
            self.sync_round(std::slice::from_ref(&browser), false).await;
        }
        let clean = browser.chromium.close().await;
        self.finish(&browser, clean).await;
        tracing::info!(screen = %number, clean, "browser closed");
    }

    /// Its page list, when screen `number`'s browser runs.
    pub fn pages(&self, number: ScreenNumber) -> Option<Arc<super::pages::Pages>> {
        self.get(number)
            .map(|browser| Arc::clone(browser.cdp().pages()))
    }

    /// Closes every browser; no new one starts afterwards.
    pub async fn close_all(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        let numbers: Vec<ScreenNumber> = self.running_map().keys().copied().collect();
        futures::future::join_all(numbers.into_iter().map(|n| self.close(n))).await;
    }

    /// One sync round: notices browsers that exited, reads every running
    /// browser's cookies into the jar, writes the differences into each,
    /// and saves the jar when it changed.
    pub async fn sync(&self) {
        let all: Vec<Arc<Browser>> = self.running_map().values().cloned().collect();
        let mut alive = Vec::with_capacity(all.len());
        for browser in all {
            if browser.is_running() {
                alive.push(browser);
            } else {
                self.retire(&browser).await;
            }
        }
        self.sync_round(&alive, true).await;
    }

    async fn sync_round(&self, browsers: &[Arc<Browser>], write_back: bool) {
        let mut jar = self.jar.lock().await;
        let now_ms = now_ms();
        for browser in browsers {
            match read_cookies(browser.cdp()).await {
                Ok(read) => {
                    if read.skipped() > 0 {
                        tracing::warn!(screen = %browser.screen.number, skipped = read.skipped(), "cookies that did not parse were left as they were");
                    }
                    let mut view = browser.view.lock().await;
                    jar.absorb(&mut view, read, now_ms);
                }
                Err(e) => {
                    tracing::warn!(screen = %browser.screen.number, "cookie sync skipped: {e}")
                }
            }
        }
        if write_back {
            for browser in browsers {
                let mut view = browser.view.lock().await;
                let writes = jar.writes_for(&view, now_ms);
                if writes.is_empty() {
                    continue;
                }
                write_into(browser.screen.number, browser.cdp(), &mut view, &writes).await;
            }
        }
        jar.prune(now_ms);
        jar.cap(super::jar::JAR_LIMITS);
        if jar.is_dirty() {
            if let Err(e) = jar.save(&self.jar_path) {
                tracing::warn!(
                    "could not save the cookie jar `{}`: {e}",
                    self.jar_path.display()
                );
            }
        }
    }

    /// Drops a browser that exited or belongs to a closed screen. One that
    /// exited cleanly (its window closed by hand) still saves its profile.
    async fn retire(&self, browser: &Arc<Browser>) {
        {
            let mut running = self.running_map();
            if running
                .get(&browser.screen.number)
                .is_some_and(|b| Arc::ptr_eq(b, browser))
            {
                running.remove(&browser.screen.number);
            }
        }
        let status = browser.chromium.process.exit_status();
        let clean = status
            .as_deref()
            .is_some_and(|s| s.ends_with("exit status: 0"));
        if status.is_some() {
            tracing::warn!(screen = %browser.screen.number, status = status.as_deref().unwrap_or(""), "browser exited; the next request starts a new one");
        }
        browser.chromium.stop().await;
        self.finish(browser, clean).await;
    }

    /// After a browser is gone: what it changed goes to the template when
    /// it closed cleanly, then its user-data folder is removed.
    async fn finish(&self, browser: &Browser, clean: bool) {
        let template = Arc::clone(&self.template);
        let profile = browser.profile.clone();
        let screen = browser.screen.number;
        let _ = tokio::task::spawn_blocking(move || {
            if clean {
                match template.copy_back(&profile) {
                    Ok(copied) if !copied.is_empty() => {
                        tracing::info!(screen = %screen, "kept in the template profile: {}", copied.join(", "));
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(screen = %screen, "could not update the template profile: {e}"),
                }
            }
            if let Err(e) = std::fs::remove_dir_all(profile.user_data_dir()) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    tracing::warn!(screen = %screen, "could not remove `{}`: {e}", profile.user_data_dir().display());
                }
            }
        })
        .await;
    }

    fn running_map(&self) -> parking_lot::MutexGuard<'_, HashMap<ScreenNumber, Arc<Browser>>> {
        self.running.lock()
    }
}

/// Runs a sync round every [`SYNC_EVERY`] until the task is aborted.
pub async fn run_cookie_sync(browsers: Arc<Browsers>) {
    let mut tick = tokio::time::interval(SYNC_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        browsers.sync().await;
    }
}

/// `~/.local/share/computer-use/cookies.json`.
pub fn jar_path(home: &Path) -> PathBuf {
    home.join(".local/share/computer-use/cookies.json")
}

/// Why a browser's cookies could not be read this round.
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error(transparent)]
    DevTools(#[from] CdpError),
    #[error(transparent)]
    Answer(#[from] NoCookiesArray),
}

async fn read_cookies(cdp: &Cdp) -> Result<CookieRead, ReadError> {
    let answer = cdp.call("Storage.getCookies", json!({})).await?;
    Ok(read_answer(&answer)?)
}

/// Writes `writes` into one browser and records in `view` what it took and
/// what it refused. Refusals are logged by cookie name, never by value.
async fn write_into(screen: ScreenNumber, cdp: &Cdp, view: &mut BrowserView, writes: &Writes) {
    match write_cookies(cdp, writes).await {
        Ok(outcome) => {
            view.applied(&outcome.written);
            view.refused(&outcome.refused);
            if !outcome.refused.is_empty() {
                tracing::warn!(screen = %screen, "the browser refused cookies; they are not shared with it: {}", outcome.refused_names());
            }
            if outcome.not_tried > 0 {
                tracing::warn!(screen = %screen, not_tried = outcome.not_tried, "cookies left for the next sync round");
            }
        }
        Err(e) => tracing::warn!(screen = %screen, "cookies not written: {e}"),
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A screen closes its browser, while it can still draw, before its
/// display goes away.
impl Companion for Browsers {
    fn stop_for(&self, number: ScreenNumber) -> futures::future::BoxFuture<'_, ()> {
        Box::pin(self.close(number))
    }
}
