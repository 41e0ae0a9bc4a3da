//! A Chrome DevTools Protocol client on one WebSocket to a browser.
//!
//! Commands carry an id and their answer comes back with the same id; a
//! reader task hands each answer to the caller waiting for it. Pages are
//! reached through the same socket with flattened sessions (`sessionId`
//! beside the command), so one connection serves the whole browser. Of the
//! events, only target events are read: they keep [`Pages`] current.
//!
//! Messages may hold cookie values, so neither they nor their parameters
//! are ever logged; errors name the method only.
//!
//! A socket that ends while the browser still runs (an answer over the
//! WebSocket's message limit, which a page can cause, ends the reader) is
//! opened again by the next command, so the browser, its tabs and the
//! person's pages stay. Commands in flight when it ended fail as closed,
//! and the page sessions attached on it are gone.

use super::pages::Pages;
use computer_protocol::handoff::PageFacts;
use futures::{SinkExt, StreamExt};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// How long one command may take before the caller gives up on it.
pub const CALL_DEADLINE: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error, Clone)]
pub enum CdpError {
    #[error("could not connect to DevTools at `{url}`: {reason}")]
    Connect { url: String, reason: String },
    #[error("the DevTools connection closed before `{method}` was answered")]
    Closed { method: String },
    #[error("DevTools did not answer `{method}` within {}s", waited.as_secs())]
    Timeout { method: String, waited: Duration },
    #[error("DevTools refused `{method}`: {message}")]
    Refused { method: String, message: String },
}

/// The browser's answer to one command: its result, or the reason it
/// refused (the error's `message`).
type Answer = Result<Value, Refusal>;

/// A DevTools error answer's message.
#[derive(Debug)]
struct Refusal(String);
type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Answer>>>>;

/// One WebSocket connection to a browser's DevTools, opened again when it
/// ends.
#[derive(Debug)]
pub struct Cdp {
    url: String,
    socket: Mutex<Socket>,
    /// Held while a new socket opens, so that only one does.
    reopening: tokio::sync::Mutex<()>,
    pending: Pending,
    pages: Arc<Pages>,
    next_id: AtomicU64,
}

/// The tasks of one open socket.
#[derive(Debug)]
struct Socket {
    outgoing: mpsc::UnboundedSender<Message>,
    reader: tokio::task::JoinHandle<()>,
    writer: tokio::task::JoinHandle<()>,
}

impl Socket {
    fn is_open(&self) -> bool {
        !self.reader.is_finished() && !self.writer.is_finished()
    }
}

impl Cdp {
    /// Connects to `url` (`ws://127.0.0.1:PORT/devtools/browser/ID`).
    pub async fn connect(url: &str) -> Result<Cdp, CdpError> {
        let pending: Pending = Arc::default();
        let pages = Arc::new(Pages::default());
        let socket = open_socket(url, &pending, &pages).await?;
        let cdp = Cdp {
            url: url.to_string(),
            socket: Mutex::new(socket),
            reopening: tokio::sync::Mutex::new(()),
            pending,
            pages,
            next_id: AtomicU64::new(1),
        };
        // The pages are then told as they open and change, each event a
        // few hundred bytes; an old browser that refuses only loses that.
        let _ = cdp
            .call("Target.setDiscoverTargets", json!({"discover": true}))
            .await;
        Ok(cdp)
    }

    /// The open socket's queue, opening a new socket when the last one
    /// ended. A new socket asks for the target events again, which tell
    /// every page there is.
    async fn outgoing(&self) -> Result<mpsc::UnboundedSender<Message>, CdpError> {
        if let Some(open) = self.open_outgoing() {
            return Ok(open);
        }
        let _turn = self.reopening.lock().await;
        // Another caller may have opened it while this one waited.
        if let Some(open) = self.open_outgoing() {
            return Ok(open);
        }
        let socket = open_socket(&self.url, &self.pending, &self.pages).await?;
        tracing::info!("the DevTools socket ended while the browser ran; opened it again");
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let discover =
            json!({"id": id, "method": "Target.setDiscoverTargets", "params": {"discover": true}});
        let _ = socket
            .outgoing
            .send(Message::Text(discover.to_string().into()));
        let outgoing = socket.outgoing.clone();
        let old = std::mem::replace(&mut *self.socket.lock(), socket);
        old.reader.abort();
        old.writer.abort();
        Ok(outgoing)
    }

    fn open_outgoing(&self) -> Option<mpsc::UnboundedSender<Message>> {
        let socket = self.socket.lock();
        socket.is_open().then(|| socket.outgoing.clone())
    }

    /// The browser's pages as its events told them.
    pub fn pages(&self) -> &Arc<Pages> {
        &self.pages
    }

    /// Runs a browser-level command and returns its `result`.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, CdpError> {
        self.send(None, method, params).await
    }

    /// Runs a command in an attached page's session.
    pub async fn call_in(
        &self,
        session_id: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        self.send(Some(session_id), method, params).await
    }

    /// Evaluates `expression` in the page of `session_id` every 50 ms until
    /// it is `true`, or until `deadline` after `started`; says which. While
    /// a page loads or swaps documents an evaluation can fail or find what
    /// it asks for missing: the next poll asks again.
    pub async fn poll_until_true(
        &self,
        session_id: &str,
        expression: &str,
        started: Instant,
        deadline: Duration,
    ) -> bool {
        while started.elapsed() < deadline {
            let answer = self
                .call_in(
                    session_id,
                    "Runtime.evaluate",
                    json!({ "expression": expression, "returnByValue": true }),
                )
                .await;
            if let Ok(answer) = answer {
                if answer.pointer("/result/value") == Some(&Value::Bool(true)) {
                    return true;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        false
    }

    /// Sends a browser-level command without waiting for its answer, which
    /// is dropped when it comes. For clean-up that must happen even where
    /// nothing can wait, such as in `Drop`.
    pub fn send_and_forget(&self, method: &str, params: Value) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({"id": id, "method": method, "params": params});
        // A closed socket has no sessions left to clean up.
        let _ = self
            .socket
            .lock()
            .outgoing
            .send(Message::Text(message.to_string().into()));
    }

    async fn send(
        &self,
        session_id: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session_id) = session_id {
            message["sessionId"] = json!(session_id);
        }
        let outgoing = self.outgoing().await?;
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id, tx);
        let closed = || CdpError::Closed {
            method: method.to_string(),
        };
        if outgoing
            .send(Message::Text(message.to_string().into()))
            .is_err()
        {
            self.forget(id);
            return Err(closed());
        }
        match tokio::time::timeout(CALL_DEADLINE, rx).await {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(Refusal(message)))) => Err(CdpError::Refused {
                method: method.to_string(),
                message,
            }),
            Ok(Err(_)) => Err(closed()),
            Err(_) => {
                self.forget(id);
                Err(CdpError::Timeout {
                    method: method.to_string(),
                    waited: CALL_DEADLINE,
                })
            }
        }
    }

    /// The page `target_id` as it is now (its title set since the navigation
    /// was told), or `None` when it is gone or does not answer in `deadline`.
    pub async fn settled_page(&self, target_id: &str, deadline: Duration) -> Option<PageFacts> {
        let info = tokio::time::timeout(
            deadline,
            self.call("Target.getTargetInfo", json!({ "targetId": target_id })),
        )
        .await
        .ok()?
        .ok()?;
        let info = info.get("targetInfo")?;
        Some(PageFacts {
            url: info.get("url")?.as_str()?.to_string(),
            title: info.get("title")?.as_str()?.to_string(),
        })
    }

    fn forget(&self, id: u64) {
        self.pending.lock().remove(&id);
    }
}

impl Drop for Cdp {
    fn drop(&mut self) {
        let socket = self.socket.lock();
        socket.reader.abort();
        socket.writer.abort();
    }
}

/// Opens a socket to `url` whose reader hands answers to `pending` and
/// target events to `pages`.
async fn open_socket(url: &str, pending: &Pending, pages: &Arc<Pages>) -> Result<Socket, CdpError> {
    let connecting = tokio_tungstenite::connect_async(url);
    let (socket, _) = tokio::time::timeout(CALL_DEADLINE, connecting)
        .await
        .map_err(|_| CdpError::Connect {
            url: url.to_string(),
            reason: format!("no answer within {}s", CALL_DEADLINE.as_secs()),
        })?
        .map_err(|e| CdpError::Connect {
            url: url.to_string(),
            reason: e.to_string(),
        })?;
    let (mut sink, mut stream) = socket.split();
    let (outgoing, mut queue) = mpsc::unbounded_channel::<Message>();
    let writer = tokio::spawn(async move {
        while let Some(message) = queue.recv().await {
            if sink.send(message).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    let answers = Arc::clone(pending);
    let seen = Arc::clone(pages);
    let reader = tokio::spawn(async move {
        while let Some(Ok(message)) = stream.next().await {
            if let Message::Text(text) = message {
                deliver(&answers, &seen, text.as_str());
            }
        }
        // Dropping the senders tells every waiting caller the socket closed.
        answers.lock().clear();
    });
    Ok(Socket {
        outgoing,
        reader,
        writer,
    })
}

/// Hands an answer to its caller and a target event to `pages`; other
/// events and answers nobody waits for any more are dropped.
fn deliver(pending: &Pending, pages: &Pages, text: &str) {
    let Ok(message) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let Some(id) = message.get("id").and_then(Value::as_u64) else {
        // Events of attached pages (with a `sessionId`) are not the
        // browser's target events.
        if message.get("sessionId").is_none() {
            if let Some(method) = message.get("method").and_then(Value::as_str) {
                pages.on_event(method, message.get("params").unwrap_or(&Value::Null));
            }
        }
        return;
    };
    let Some(caller) = pending.lock().remove(&id) else {
        return;
    };
    let answer = match message.get("error") {
        Some(error) => Err(Refusal(
            error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no reason given")
                .to_string(),
        )),
        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
    };
    let _ = caller.send(answer);
}
