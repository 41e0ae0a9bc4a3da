//! The shared cookie jar: what every Chromium's cookies should be, merged
//! from all of them, and its file `cookies.json`.
//!
//! Each round of the sync loop, for every running Chromium: read its cookies,
//! [`Jar::absorb`] them against that browser's [`BrowserView`] (what we last
//! knew it to hold); then for every Chromium, write [`Jar::writes_for`] into
//! it and record them with [`BrowserView::applied`]. A removed cookie stays in
//! the jar as a tombstone so its removal (a sign-out) reaches the other
//! browsers too. When two browsers change the same cookie, the one absorbed
//! later wins. After the round: [`Jar::prune`], [`Jar::cap`] with
//! [`JAR_LIMITS`] (per site, entries, bytes), and [`Jar::save`] when
//! [`Jar::is_dirty`].
//!
//! A new Chromium gets [`Jar::live`] before its first page; recording that
//! write with `applied` makes its first read a no-change instead of a flood
//! of "new" cookies.
//!
//! Time is passed in (`now_ms`, milliseconds since the Unix epoch) so tests
//! control it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use computer_protocol::Hidden;
use serde::{Deserialize, Serialize};

use super::cookie::{Cookie, CookieKey};
use super::cookie_read::CookieRead;

/// How many entries (live cookies and tombstones) the jar keeps. Far above what a few logins need, small enough
/// that a page setting cookies in a loop cannot grow the file without end.
pub const JAR_MAX_COOKIES: usize = 5000;

/// How many entries one site keeps, as Chromium keeps 180 cookies per
/// domain: a page flooding cookies evicts its own first.
pub const SITE_MAX_COOKIES: usize = 180;

/// How many bytes (names, values, domains and paths) the jar keeps: a few
/// hundred logins fit many times over, yet a flood cannot make each sync
/// round push tens of megabytes into every browser and the file.
pub const JAR_MAX_BYTES: usize = 2 * 1024 * 1024;

/// What [`Jar::cap`] keeps the jar within.
#[derive(Debug, Clone, Copy)]
pub struct JarLimits {
    /// Entries in all, tombstones included.
    pub entries: usize,
    /// Entries of one site ([`site_of`]).
    pub per_site: usize,
    /// Bytes of all entries ([`entry_bytes`]).
    pub bytes: usize,
}

/// The limits the sync loop and [`Jar::load`] apply.
pub const JAR_LIMITS: JarLimits = JarLimits {
    entries: JAR_MAX_COOKIES,
    per_site: SITE_MAX_COOKIES,
    bytes: JAR_MAX_BYTES,
};

/// After a week every running browser has long received a removal, so its
/// tombstone has nothing left to do.
pub const TOMBSTONE_TTL_MS: u64 = 7 * 24 * 60 * 60 * 1000;

/// The file format's version; another number means a file we cannot read.
const JAR_VERSION: u32 = 1;

/// One cookie in the jar.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JarEntry {
    /// The cookie; for a tombstone, its identity and flags with an empty
    /// value (a removed login is not kept on disk).
    pub cookie: Cookie,
    /// When the jar last took a change of this cookie: orders the cap
    /// within a site.
    pub changed_at_ms: u64,
    /// When the jar first took this cookie (kept through changes and its
    /// removal). A site is as old as its oldest entry, and the cap takes
    /// from the newest site first. 0 in a file written before the jar kept
    /// it: the oldest of all.
    #[serde(default)]
    pub created_at_ms: u64,
    /// A tombstone: the cookie was removed and the removal must spread.
    pub deleted: bool,
}

/// The merged cookies of all browsers.
#[derive(Debug, Default)]
pub struct Jar {
    /// Ordered so writes and the file come out in the same order every time.
    entries: BTreeMap<CookieKey, JarEntry>,
    /// Changed since the last save, so the loop writes the file only then.
    dirty: bool,
}

/// What one running browser holds, as far as we know: what it reported at
/// the last read, plus what we wrote into it since.
#[derive(Debug, Default)]
pub struct BrowserView {
    cookies: HashMap<CookieKey, Cookie>,
    /// Writes since the last read, checked at the next one: a set that is
    /// missing, or a deleted cookie still there, means the browser refused
    /// the write. That must not read as the user signing out, or in.
    unconfirmed: HashMap<CookieKey, Expected>,
    /// Content the browser refused, so the same write is not retried every
    /// round; a new content for the key is tried again.
    refused: HashMap<CookieKey, Cookie>,
}

#[derive(Debug)]
enum Expected {
    Set,
    /// The cookie the browser held when we deleted it.
    Deleted(Box<Cookie>),
}

/// What to write into one browser so it matches the jar.
#[derive(Debug, Default, PartialEq)]
pub struct Writes {
    pub set: Vec<Cookie>,
    pub delete: Vec<Cookie>,
}

impl Writes {
    pub fn is_empty(&self) -> bool {
        self.set.is_empty() && self.delete.is_empty()
    }

    /// All of it as `Network.CookieParam`s for one `Storage.setCookies`.
    pub fn to_params(&self) -> Vec<serde_json::Value> {
        let sets = self.set.iter().map(Cookie::to_param);
        sets.chain(self.delete.iter().map(Cookie::deletion_param))
            .collect()
    }
}

impl BrowserView {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `writes` as done: the browser now holds the sets and not the
    /// deletes, to be confirmed at the next [`Jar::absorb`].
    pub fn applied(&mut self, writes: &Writes) {
        for cookie in &writes.set {
            let key = cookie.key();
            self.cookies.insert(key.clone(), cookie.clone());
            self.unconfirmed.insert(key, Expected::Set);
        }
        for cookie in &writes.delete {
            let key = cookie.key();
            if let Some(had) = self.cookies.remove(&key) {
                self.unconfirmed
                    .insert(key, Expected::Deleted(Box::new(had)));
            }
        }
    }

    /// Records writes the browser refused, so they are not tried again
    /// until the jar's content for the cookie changes. A refused delete is
    /// recorded against the cookie the browser still holds.
    pub fn refused(&mut self, refused: &Writes) {
        for cookie in &refused.set {
            self.refused.insert(cookie.key(), cookie.clone());
        }
        for cookie in &refused.delete {
            let key = cookie.key();
            if let Some(held) = self.cookies.get(&key) {
                self.refused.insert(key, held.clone());
            }
        }
    }

    fn was_refused(&self, key: &CookieKey, cookie: &Cookie) -> bool {
        self.refused
            .get(key)
            .is_some_and(|refused| refused.same_content(cookie))
    }
}

impl Jar {
    /// Takes what one browser holds now (`read`, from `Storage.getCookies`)
    /// into the jar, comparing with what it held before (`view`), and makes
    /// `view` the new state. Returns how many jar entries changed.
    ///
    /// A cookie the read could not parse is not a removal: it stays in
    /// `view` as it was, and when the read could not even tell which
    /// cookies those were, no cookie counts as removed this time.
    pub fn absorb(
        &mut self,
        view: &mut BrowserView,
        read: impl Into<CookieRead>,
        now_ms: u64,
    ) -> usize {
        let read = read.into();
        let removals_trusted = read.unidentified == 0;
        let unreadable: HashSet<CookieKey> = read.unreadable.into_iter().collect();
        // An expired cookie is as good as gone; an unshareable one is not ours.
        let mut current: HashMap<CookieKey, Cookie> = read
            .cookies
            .into_iter()
            .filter(|c| c.is_shareable() && !c.is_expired(now_ms))
            .map(|c| (c.key(), c))
            .collect();
        let mut unconfirmed = std::mem::take(&mut view.unconfirmed);
        let mut changed = 0;

        for (key, cookie) in &current {
            if view
                .cookies
                .get(key)
                .is_some_and(|known| known.same_content(cookie))
            {
                continue;
            }
            if let Some(Expected::Deleted(had)) = unconfirmed.get(key) {
                if had.same_content(cookie) {
                    view.refused.insert(key.clone(), cookie.clone());
                    continue;
                }
            }
            changed += self.take_live(key, cookie, now_ms);
        }

        let mut unknown = HashMap::new();
        for (key, known) in &view.cookies {
            if current.contains_key(key) {
                continue;
            }
            if !removals_trusted || unreadable.contains(key) {
                // Perhaps still there: kept as it was, checked again next time.
                unknown.insert(key.clone(), known.clone());
                if let Some(expected) = unconfirmed.remove(key) {
                    view.unconfirmed.insert(key.clone(), expected);
                }
                continue;
            }
            if matches!(unconfirmed.get(key), Some(Expected::Set)) {
                view.refused.insert(key.clone(), known.clone());
                continue;
            }
            // Gone because its time ran out, not because anyone signed out;
            // the jar's copy runs out just the same.
            if known.is_expired(now_ms) {
                continue;
            }
            changed += self.take_removal(key, known, now_ms);
        }

        current.extend(unknown);
        view.cookies = current;
        view.refused.retain(|key, _| self.entries.contains_key(key));
        changed
    }

    fn take_live(&mut self, key: &CookieKey, cookie: &Cookie, now_ms: u64) -> usize {
        if let Some(entry) = self.entries.get(key) {
            if !entry.deleted && entry.cookie.same_content(cookie) {
                return 0;
            }
        }
        let entry = JarEntry {
            cookie: cookie.clone(),
            changed_at_ms: now_ms,
            created_at_ms: self.created_at(key, now_ms),
            deleted: false,
        };
        self.entries.insert(key.clone(), entry);
        self.dirty = true;
        1
    }

    /// When `key` first came into the jar: now, for a new one.
    fn created_at(&self, key: &CookieKey, now_ms: u64) -> u64 {
        self.entries
            .get(key)
            .map_or(now_ms, |entry| entry.created_at_ms)
    }

    fn take_removal(&mut self, key: &CookieKey, cookie: &Cookie, now_ms: u64) -> usize {
        if self.entries.get(key).is_some_and(|entry| entry.deleted) {
            return 0;
        }
        let tombstone = JarEntry {
            cookie: Cookie {
                value: Hidden::default(),
                ..cookie.clone()
            },
            changed_at_ms: now_ms,
            created_at_ms: self.created_at(key, now_ms),
            deleted: true,
        };
        self.entries.insert(key.clone(), tombstone);
        self.dirty = true;
        1
    }

    /// What to write into the browser of `view` so it matches the jar: live
    /// cookies whose content it lacks, and tombstones it still holds.
    pub fn writes_for(&self, view: &BrowserView, now_ms: u64) -> Writes {
        let mut writes = Writes::default();
        for (key, entry) in &self.entries {
            let held = view.cookies.get(key);
            if entry.deleted {
                if let Some(held) = held {
                    if !view.was_refused(key, held) {
                        writes.delete.push(entry.cookie.clone());
                    }
                }
            } else if !entry.cookie.is_expired(now_ms)
                && !held.is_some_and(|held| held.same_content(&entry.cookie))
                && !view.was_refused(key, &entry.cookie)
            {
                writes.set.push(entry.cookie.clone());
            }
        }
        writes
    }

    /// The cookies a new browser should start with.
    pub fn live(&self, now_ms: u64) -> Vec<Cookie> {
        self.entries
            .values()
            .filter(|entry| !entry.deleted && !entry.cookie.is_expired(now_ms))
            .map(|entry| entry.cookie.clone())
            .collect()
    }

    /// The jar's entry for `key`, live or tombstone.
    pub fn get(&self, key: &CookieKey) -> Option<&JarEntry> {
        self.entries.get(key)
    }

    /// Entries, tombstones included.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Drops entries (tombstones count) until the jar is within `limits`:
    /// first each site ([`site_of`], a registrable domain) down to
    /// [`JarLimits::per_site`]; then, while there are too many entries or
    /// bytes, from the site the jar first saw most recently (ties: the one
    /// with the most entries, or bytes). Within a site the least recently
    /// changed entry goes first. So a page that floods cookies over many
    /// sites, or many subdomains of its own, evicts its own cookies, never
    /// the logins of sites the person had before.
    pub fn cap(&mut self, limits: JarLimits) {
        let before = self.entries.len();
        let mut sites = self.sites();
        for site in sites.values_mut() {
            while site.oldest_last.len() > limits.per_site {
                self.evict_oldest(site);
            }
        }
        self.evict_from_newest(
            &mut sites,
            |site| (site.first_seen_ms, site.oldest_last.len(), site.bytes),
            |count, _| count > limits.entries,
        );
        self.evict_from_newest(
            &mut sites,
            |site| (site.first_seen_ms, site.bytes, site.oldest_last.len()),
            |_, bytes| bytes > limits.bytes,
        );
        if self.entries.len() != before {
            self.dirty = true;
        }
    }

    /// The jar's entries grouped by [`site_of`].
    fn sites(&self) -> BTreeMap<String, Site> {
        let mut sites: BTreeMap<String, Site> = BTreeMap::new();
        for (key, entry) in &self.entries {
            let site = sites.entry(site_of(&entry.cookie)).or_insert(Site {
                oldest_last: Vec::new(),
                bytes: 0,
                first_seen_ms: u64::MAX,
            });
            site.first_seen_ms = site.first_seen_ms.min(entry.created_at_ms);
            site.bytes += entry_bytes(entry);
            site.oldest_last.push((entry.changed_at_ms, key.clone()));
        }
        for site in sites.values_mut() {
            // Newest first, so the oldest pops off the end; ties in time
            // are cut in key order (the greater key goes first), so the
            // result is the same every run.
            site.oldest_last
                .sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        }
        sites
    }

    /// Evicts from the site that `rank` puts highest (ties: the greater
    /// name) while `over(entries, bytes)` holds for the whole jar.
    fn evict_from_newest(
        &mut self,
        sites: &mut BTreeMap<String, Site>,
        rank: fn(&Site) -> (u64, usize, usize),
        over: impl Fn(usize, usize) -> bool,
    ) {
        let mut bytes: usize = sites.values().map(|site| site.bytes).sum();
        let mut order: BTreeSet<((u64, usize, usize), String)> = sites
            .iter()
            .filter(|(_, site)| !site.oldest_last.is_empty())
            .map(|(name, site)| (rank(site), name.clone()))
            .collect();
        while over(self.entries.len(), bytes) {
            let Some((_, name)) = order.pop_last() else {
                break;
            };
            let Some(site) = sites.get_mut(&name) else {
                break;
            };
            bytes -= self.evict_oldest(site);
            if !site.oldest_last.is_empty() {
                order.insert((rank(site), name));
            }
        }
    }

    /// Removes `site`'s least recently changed entry from the jar and
    /// returns its size in bytes.
    fn evict_oldest(&mut self, site: &mut Site) -> usize {
        let Some((_, key)) = site.oldest_last.pop() else {
            return 0;
        };
        let gone = self
            .entries
            .remove(&key)
            .map_or(0, |entry| entry_bytes(&entry));
        site.bytes -= gone;
        gone
    }

    /// Drops what no longer does anything: tombstones older than
    /// [`TOMBSTONE_TTL_MS`] and live cookies past their expiry.
    pub fn prune(&mut self, now_ms: u64) {
        let before = self.entries.len();
        self.entries.retain(|_, entry| {
            if entry.deleted {
                now_ms.saturating_sub(entry.changed_at_ms) < TOMBSTONE_TTL_MS
            } else {
                !entry.cookie.is_expired(now_ms)
            }
        });
        if self.entries.len() != before {
            self.dirty = true;
        }
    }

    /// Whether the jar changed since it was loaded or last saved.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Reads the jar at `path`. A missing file is an empty jar. A file that
    /// cannot be read or parsed is moved aside to `<path>.bad` (replacing an
    /// older one) so the next save does not destroy it, and the jar starts
    /// empty; the warning says so, without any cookie value.
    pub fn load(path: &Path) -> (Jar, Option<String>) {
        let problem = match fs::read(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return (Jar::default(), None),
            Err(e) => format!("could not be read ({e})"),
            Ok(bytes) => match parse(&bytes) {
                Ok(jar) => return (jar, None),
                Err(problem) => problem.to_string(),
            },
        };
        let bad = bad_path(path);
        let moved = match fs::rename(path, &bad) {
            Ok(()) => format!("moved it to `{}`", bad.display()),
            Err(e) => format!("could not move it to `{}` ({e})", bad.display()),
        };
        let warning = format!(
            "cookie jar `{}` {problem}; {moved} and started an empty jar, so browsers start signed out",
            path.display()
        );
        (Jar::default(), Some(warning))
    }

    /// Writes the jar to `path` atomically: a temp file in the same folder,
    /// mode 0600 from its creation, synced, then renamed over `path`. A crash
    /// leaves the old file or the new one, never half of one. Creates missing
    /// folders with mode 0700. Clears [`Jar::is_dirty`].
    pub fn save(&mut self, path: &Path) -> io::Result<()> {
        let folder = match path.parent() {
            Some(folder) if !folder.as_os_str().is_empty() => folder,
            _ => Path::new("."),
        };
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(folder)?;
        let file = JarFile {
            version: JAR_VERSION,
            cookies: self.entries.values().cloned().collect(),
        };
        let bytes = serde_json::to_vec(&file).map_err(io::Error::other)?;

        let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
        tmp_name.push(format!(".tmp-{}", std::process::id()));
        let tmp = folder.join(tmp_name);
        // A temp file left by a crash may have other permissions: start anew.
        match fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let written = write_synced(&tmp, &bytes).and_then(|()| fs::rename(&tmp, path));
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        // Make the rename itself durable.
        File::open(folder)?.sync_all()?;
        self.dirty = false;
        Ok(())
    }
}

/// One site's entries, while [`Jar::cap`] runs.
#[derive(Debug)]
struct Site {
    /// Change time and key of each entry, the least recently changed last.
    oldest_last: Vec<(u64, CookieKey)>,
    bytes: usize,
    /// The oldest `created_at_ms` of its entries.
    first_seen_ms: u64,
}

/// The site a cookie counts against: the registrable domain of its host
/// (`login.bank.co.uk` and `bank.co.uk` are `bank.co.uk`, by the public
/// suffix list), lowercased, or the host itself when it has none (an
/// address, `localhost`). So a page cannot spread a flood over subdomains
/// of its own to stay under the per-site limit.
fn site_of(cookie: &Cookie) -> String {
    let host = cookie
        .domain
        .trim_start_matches('.')
        .trim_end_matches('.')
        .to_ascii_lowercase();
    let address = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<std::net::IpAddr>();
    match psl::domain_str(&host) {
        Some(domain) if address.is_err() => domain.to_string(),
        _ => host,
    }
}

/// What an entry costs: the bytes of its name, value, domain and path.
fn entry_bytes(entry: &JarEntry) -> usize {
    let cookie = &entry.cookie;
    cookie.name.len() + cookie.value.expose().len() + cookie.domain.len() + cookie.path.len()
}

/// The file's shape: `{"version":1,"cookies":[...]}`.
#[derive(Serialize, Deserialize)]
struct JarFile {
    version: u32,
    cookies: Vec<JarEntry>,
}

/// Why a jar file is not one. It names the JSON error's kind and place
/// only: serde's own message can quote the file's text, which holds cookie
/// values.
#[derive(Debug, thiserror::Error)]
enum NotAJar {
    #[error("{kind} (line {line}, column {column})")]
    Json {
        kind: &'static str,
        line: usize,
        column: usize,
    },
    #[error("has version {found}, expected {JAR_VERSION}")]
    Version { found: u32 },
}

/// The jar in `bytes`, or why it is not one.
fn parse(bytes: &[u8]) -> Result<Jar, NotAJar> {
    let file: JarFile = serde_json::from_slice(bytes).map_err(|e| {
        let kind = match e.classify() {
            serde_json::error::Category::Io => "could not be read",
            serde_json::error::Category::Syntax => "is not valid JSON",
            serde_json::error::Category::Eof => "ends early",
            serde_json::error::Category::Data => "does not have the jar's fields",
        };
        NotAJar::Json {
            kind,
            line: e.line(),
            column: e.column(),
        }
    })?;
    if file.version != JAR_VERSION {
        return Err(NotAJar::Version {
            found: file.version,
        });
    }
    let mut jar = Jar::default();
    for entry in file.cookies {
        if !entry.cookie.is_shareable() {
            continue;
        }
        let key = entry.cookie.key();
        // A hand-edited file may repeat a cookie: the latest change wins.
        if jar
            .entries
            .get(&key)
            .is_some_and(|kept| kept.changed_at_ms > entry.changed_at_ms)
        {
            continue;
        }
        jar.entries.insert(key, entry);
    }
    jar.cap(JAR_LIMITS);
    Ok(jar)
}

fn bad_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".bad");
    path.with_file_name(name)
}

fn write_synced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    // The umask can only narrow 0600 at creation; set it exactly, so the
    // daemon can read its own jar back whatever umask it runs under.
    file.set_permissions(fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    use super::*;
    use crate::browser::cookie::tests::{cookie, session_cookie};
    use crate::browser::cookie_read::read_answer;

    const T0: u64 = 1_900_000_000_000;

    /// One round of the sync loop for browsers `a` and `b`: absorb both, then
    /// write into both. Returns what was written into each.
    fn sync(
        jar: &mut Jar,
        a: (&mut BrowserView, Vec<Cookie>),
        b: (&mut BrowserView, Vec<Cookie>),
        now_ms: u64,
    ) -> (Writes, Writes) {
        jar.absorb(a.0, a.1, now_ms);
        jar.absorb(b.0, b.1, now_ms);
        let (wa, wb) = (jar.writes_for(a.0, now_ms), jar.writes_for(b.0, now_ms));
        a.0.applied(&wa);
        b.0.applied(&wb);
        (wa, wb)
    }

    #[test]
    fn sign_in_on_a_is_written_into_b() {
        let mut jar = Jar::default();
        let (mut a, b) = (BrowserView::new(), BrowserView::new());
        let sid = cookie("sid", "login-1");

        assert_eq!(jar.absorb(&mut a, vec![sid.clone()], T0), 1);
        assert!(jar.is_dirty());
        assert_eq!(
            jar.writes_for(&a, T0),
            Writes::default(),
            "a already has it"
        );
        let writes = jar.writes_for(&b, T0);
        assert_eq!(writes.set, vec![sid.clone()]);
        assert!(writes.delete.is_empty());
        assert_eq!(writes.to_params(), vec![sid.to_param()]);
    }

    #[test]
    fn reading_back_what_was_written_is_no_change() {
        let mut jar = Jar::default();
        let (mut a, mut b) = (BrowserView::new(), BrowserView::new());
        let sid = cookie("sid", "login-1");
        jar.absorb(&mut a, vec![sid.clone()], T0);
        let writes = jar.writes_for(&b, T0);
        b.applied(&writes);
        assert_eq!(
            jar.writes_for(&b, T0),
            Writes::default(),
            "not written twice"
        );

        // Chromium reports the written cookie with its own expiry digits and
        // the fields it fills in.
        let mut read_back = sid.clone();
        read_back.expires += 0.000_001;
        read_back.priority = None;
        let stamp = jar.get(&sid.key()).unwrap().changed_at_ms;
        assert_eq!(jar.absorb(&mut b, vec![read_back], T0 + 2000), 0);
        assert_eq!(jar.get(&sid.key()).unwrap().changed_at_ms, stamp);
        assert_eq!(jar.writes_for(&a, T0 + 2000), Writes::default());
        assert_eq!(jar.writes_for(&b, T0 + 2000), Writes::default());
    }

    #[test]
    fn sign_out_on_a_deletes_in_b_and_b_does_not_bring_it_back() {
        let mut jar = Jar::default();
        let (mut a, mut b) = (BrowserView::new(), BrowserView::new());
        let sid = cookie("sid", "login-1");
        let other = cookie("theme", "dark");
        let both = vec![sid.clone(), other.clone()];
        sync(&mut jar, (&mut a, both.clone()), (&mut b, vec![]), T0);

        // A signs out: its `sid` is gone.
        let (to_a, to_b) = sync(
            &mut jar,
            (&mut a, vec![other.clone()]),
            (&mut b, both.clone()),
            T0 + 2000,
        );
        assert_eq!(to_a, Writes::default());
        assert!(to_b.set.is_empty());
        assert_eq!(to_b.delete.len(), 1);
        assert_eq!(to_b.delete[0].key(), sid.key());
        let param = &to_b.to_params()[0];
        assert_eq!(
            (param["name"].as_str(), param["expires"].as_i64()),
            (Some("sid"), Some(1))
        );
        assert_eq!(param["value"], "", "a deletion carries no value");
        assert!(jar.get(&sid.key()).unwrap().deleted);
        assert!(
            jar.get(&sid.key())
                .unwrap()
                .cookie
                .value
                .expose()
                .is_empty(),
            "tombstone keeps no login"
        );

        // B's next read no longer has it: nothing changes, nothing comes back.
        let changed = jar.absorb(&mut b, vec![other.clone()], T0 + 4000);
        assert_eq!(changed, 0);
        assert!(jar.get(&sid.key()).unwrap().deleted);
        assert_eq!(jar.live(T0 + 4000), vec![other]);
        assert_eq!(jar.writes_for(&a, T0 + 4000), Writes::default());
        assert_eq!(jar.writes_for(&b, T0 + 4000), Writes::default());
    }

    #[test]
    fn signing_in_again_after_a_sign_out_spreads() {
        let mut jar = Jar::default();
        let (mut a, mut b) = (BrowserView::new(), BrowserView::new());
        sync(
            &mut jar,
            (&mut a, vec![cookie("sid", "1")]),
            (&mut b, vec![]),
            T0,
        );
        sync(
            &mut jar,
            (&mut a, vec![]),
            (&mut b, vec![cookie("sid", "1")]),
            T0 + 2000,
        );
        let (_, to_a) = sync(
            &mut jar,
            (&mut b, vec![cookie("sid", "2")]),
            (&mut a, vec![]),
            T0 + 4000,
        );
        assert_eq!(to_a.set, vec![cookie("sid", "2")]);
    }

    #[test]
    fn when_two_browsers_change_a_cookie_the_later_absorb_wins() {
        let mut jar = Jar::default();
        let (mut a, mut b) = (BrowserView::new(), BrowserView::new());
        let start = cookie("sid", "0");
        sync(
            &mut jar,
            (&mut a, vec![start.clone()]),
            (&mut b, vec![]),
            T0,
        );
        sync(
            &mut jar,
            (&mut a, vec![start.clone()]),
            (&mut b, vec![start]),
            T0 + 2000,
        );

        let (to_a, to_b) = sync(
            &mut jar,
            (&mut a, vec![cookie("sid", "from-a")]),
            (&mut b, vec![cookie("sid", "from-b")]),
            T0 + 4000,
        );
        assert_eq!(to_a.set, vec![cookie("sid", "from-b")]);
        assert_eq!(to_b, Writes::default());
        assert_eq!(jar.live(T0 + 4000), vec![cookie("sid", "from-b")]);
    }

    #[test]
    fn the_same_content_from_a_second_browser_is_no_change() {
        let mut jar = Jar::default();
        let (mut a, mut b) = (BrowserView::new(), BrowserView::new());
        jar.absorb(&mut a, vec![cookie("sid", "1")], T0);
        assert_eq!(jar.absorb(&mut b, vec![cookie("sid", "1")], T0 + 2000), 0);
        assert_eq!(
            jar.get(&cookie("sid", "1").key()).unwrap().changed_at_ms,
            T0
        );
    }

    #[test]
    fn opaque_partition_cookies_never_enter_the_jar() {
        let mut jar = Jar::default();
        let mut a = BrowserView::new();
        let mut opaque = cookie("sid", "1");
        opaque.partition_key_opaque = Some(true);
        assert_eq!(jar.absorb(&mut a, vec![opaque.clone()], T0), 0);
        assert!(jar.is_empty() && !jar.is_dirty());
        // Nor does its disappearance become a tombstone.
        assert_eq!(jar.absorb(&mut a, vec![], T0 + 2000), 0);
        assert!(jar.is_empty());
        assert_eq!(jar.writes_for(&BrowserView::new(), T0), Writes::default());
    }

    #[test]
    fn partitioned_and_unpartitioned_cookies_of_one_name_are_two_entries() {
        let mut jar = Jar::default();
        let mut partitioned = cookie("sid", "p");
        partitioned.partition_key = Some(
            serde_json::json!({"topLevelSite": "https://a.test", "hasCrossSiteAncestor": false}),
        );
        jar.absorb(
            &mut BrowserView::new(),
            vec![partitioned, cookie("sid", "u")],
            T0,
        );
        assert_eq!(jar.len(), 2);
    }

    #[test]
    fn expired_cookies_are_not_given_to_a_new_browser_nor_written() {
        let mut jar = Jar::default();
        let mut a = BrowserView::new();
        let mut short = cookie("short", "1");
        short.expires = (T0 / 1000 + 10) as f64;
        let long = cookie("long", "1");
        jar.absorb(&mut a, vec![short.clone(), long.clone()], T0);
        assert_eq!(jar.live(T0).len(), 2);

        let later = T0 + 11_000;
        assert_eq!(jar.live(later), vec![long.clone()]);
        assert_eq!(
            jar.writes_for(&BrowserView::new(), later).set,
            vec![long.clone()]
        );
        // A browser dropping an expired cookie is not a sign-out.
        assert_eq!(jar.absorb(&mut a, vec![long.clone()], later), 0);
        assert!(!jar.get(&short.key()).unwrap().deleted);
        // A browser still reporting an expired cookie does not bring it in.
        let mut b = BrowserView::new();
        assert_eq!(jar.absorb(&mut b, vec![short.clone()], later + 1), 0);
        jar.prune(later);
        assert_eq!(jar.get(&short.key()).map(|e| e.deleted), None);
    }

    #[test]
    fn a_new_browser_seeded_with_live_cookies_reads_back_no_change() {
        let mut jar = Jar::default();
        jar.absorb(
            &mut BrowserView::new(),
            vec![cookie("sid", "1"), session_cookie("s", "2")],
            T0,
        );
        let mut fresh = BrowserView::new();
        let seed = Writes {
            set: jar.live(T0),
            delete: vec![],
        };
        assert_eq!(seed, jar.writes_for(&fresh, T0));
        fresh.applied(&seed);
        assert_eq!(jar.absorb(&mut fresh, jar.live(T0), T0 + 2000), 0);
        assert_eq!(jar.writes_for(&fresh, T0 + 2000), Writes::default());
    }

    #[test]
    fn session_cookies_are_written_without_expires() {
        let mut jar = Jar::default();
        jar.absorb(&mut BrowserView::new(), vec![session_cookie("s", "1")], T0);
        let params = jar.writes_for(&BrowserView::new(), T0).to_params();
        assert_eq!(params.len(), 1);
        assert!(params[0].get("expires").is_none(), "{}", params[0]);
    }

    #[test]
    fn a_set_the_browser_refused_is_not_a_sign_out_and_is_not_retried() {
        let mut jar = Jar::default();
        let (mut a, mut b) = (BrowserView::new(), BrowserView::new());
        let sid = cookie("sid", "1");
        sync(&mut jar, (&mut a, vec![sid.clone()]), (&mut b, vec![]), T0);

        // B did not keep what we wrote.
        assert_eq!(jar.absorb(&mut b, vec![], T0 + 2000), 0);
        assert!(!jar.get(&sid.key()).unwrap().deleted, "a keeps its login");
        assert_eq!(jar.writes_for(&b, T0 + 2000), Writes::default());
        assert_eq!(jar.writes_for(&a, T0 + 2000), Writes::default());

        // A new content is tried again.
        jar.absorb(&mut a, vec![cookie("sid", "2")], T0 + 4000);
        assert_eq!(jar.writes_for(&b, T0 + 4000).set, vec![cookie("sid", "2")]);
    }

    #[test]
    fn a_delete_the_browser_refused_does_not_bring_the_cookie_back() {
        let mut jar = Jar::default();
        let (mut a, mut b) = (BrowserView::new(), BrowserView::new());
        let sid = cookie("sid", "1");
        sync(
            &mut jar,
            (&mut a, vec![sid.clone()]),
            (&mut b, vec![sid.clone()]),
            T0,
        );
        let (_, to_b) = sync(
            &mut jar,
            (&mut a, vec![]),
            (&mut b, vec![sid.clone()]),
            T0 + 2000,
        );
        assert_eq!(to_b.delete.len(), 1);

        // B still has it after the delete.
        assert_eq!(jar.absorb(&mut b, vec![sid.clone()], T0 + 4000), 0);
        assert!(jar.get(&sid.key()).unwrap().deleted);
        assert_eq!(jar.writes_for(&a, T0 + 4000), Writes::default());
        assert_eq!(
            jar.writes_for(&b, T0 + 4000),
            Writes::default(),
            "not retried"
        );
        // B's page setting a new value is a real sign-in.
        assert_eq!(jar.absorb(&mut b, vec![cookie("sid", "2")], T0 + 6000), 1);
        assert_eq!(jar.writes_for(&a, T0 + 6000).set, vec![cookie("sid", "2")]);
    }

    /// A `Storage.getCookies` answer holding `cookies`, the one named
    /// `odd` with `expires` as a string, as a changed Chromium might send.
    fn answer_with_odd_expires(cookies: &[Cookie], odd: &str) -> serde_json::Value {
        let items: Vec<serde_json::Value> = cookies
            .iter()
            .map(|c| {
                let mut item = serde_json::to_value(c).unwrap();
                if c.name == odd {
                    item["expires"] = "2033-05-18T03:33:20Z".into();
                }
                item
            })
            .collect();
        serde_json::json!({ "cookies": items })
    }

    #[test]
    fn a_cookie_that_does_not_parse_signs_nobody_out() {
        let mut jar = Jar::default();
        let (mut a, mut b) = (BrowserView::new(), BrowserView::new());
        let held = vec![cookie("sid", "1"), cookie("csrf", "2"), cookie("pref", "3")];
        sync(&mut jar, (&mut a, held.clone()), (&mut b, vec![]), T0);

        let answer = answer_with_odd_expires(&held, "pref");
        let read = read_answer(&answer).unwrap();
        assert_eq!(jar.absorb(&mut a, read, T0 + 2000), 0);
        for c in &held {
            let entry = jar.get(&c.key()).unwrap();
            assert!(!entry.deleted, "{c:?} tombstoned");
        }
        assert_eq!(jar.live(T0 + 2000).len(), 3);
        assert_eq!(jar.writes_for(&b, T0 + 2000), Writes::default());

        // A cookie whose identity cannot be read either: no removal counts.
        let answer = serde_json::json!({ "cookies": [{"name": 7}] });
        assert_eq!(
            jar.absorb(&mut a, read_answer(&answer).unwrap(), T0 + 4000),
            0
        );
        assert_eq!(jar.live(T0 + 4000).len(), 3);
        // Once the answer reads again, a real sign-out still spreads.
        assert_eq!(jar.absorb(&mut a, held[1..].to_vec(), T0 + 6000), 1);
        assert!(jar.get(&held[0].key()).unwrap().deleted);
    }

    #[test]
    fn a_refused_write_is_not_retried_and_the_rest_count_as_written() {
        let mut jar = Jar::default();
        let (mut a, mut b) = (BrowserView::new(), BrowserView::new());
        let (good, bad) = (cookie("sid", "1"), cookie("p", "long path"));
        jar.absorb(&mut a, vec![good.clone(), bad.clone()], T0);
        let writes = jar.writes_for(&b, T0);
        assert_eq!(writes.set.len(), 2);
        b.applied(&Writes {
            set: vec![good.clone()],
            delete: vec![],
        });
        b.refused(&Writes {
            set: vec![bad.clone()],
            delete: vec![],
        });
        assert_eq!(jar.writes_for(&b, T0), Writes::default());
        assert_eq!(jar.absorb(&mut b, vec![good.clone()], T0 + 2000), 0);
        assert!(!jar.get(&bad.key()).unwrap().deleted, "a keeps it");
    }

    #[test]
    fn cap_keeps_the_most_recently_changed_entries_tombstones_included() {
        let mut jar = Jar::default();
        let all: Vec<Cookie> = (0..JAR_MAX_COOKIES + 10)
            .map(|i| cookie(&format!("c{i}"), "v"))
            .collect();
        // One cookie per millisecond, oldest first.
        for (i, c) in all.iter().enumerate() {
            jar.take_live(&c.key(), c, T0 + i as u64);
        }
        // Then the oldest is removed: its tombstone is the newest change.
        let mut view = BrowserView::new();
        view.cookies.insert(all[0].key(), all[0].clone());
        jar.absorb(&mut view, vec![], T0 + 100_000);
        assert_eq!(jar.len(), JAR_MAX_COOKIES + 10);

        jar.cap(entries_only(JAR_MAX_COOKIES));
        assert_eq!(jar.len(), JAR_MAX_COOKIES);
        assert!(
            jar.get(&all[0].key()).unwrap().deleted,
            "newest change kept"
        );
        for dropped in &all[1..11] {
            assert!(jar.get(&dropped.key()).is_none(), "{dropped:?}");
        }
        assert!(jar.get(&all[11].key()).is_some());
        assert!(jar.get(&all.last().unwrap().key()).is_some());
    }

    /// Only the entry limit, as the cap was before sites and bytes counted.
    fn entries_only(entries: usize) -> JarLimits {
        JarLimits {
            entries,
            per_site: usize::MAX,
            bytes: usize::MAX,
        }
    }

    fn on_site(cookie: Cookie, site: &str) -> Cookie {
        Cookie {
            domain: format!(".{site}"),
            ..cookie
        }
    }

    /// `count` cookies of `value_len` bytes on each of `sites` sites
    /// `flood-N.example`, taken into `jar` at `now_ms`.
    fn flood(jar: &mut Jar, sites: usize, count: usize, value_len: usize, now_ms: u64) {
        let value = "x".repeat(value_len);
        let cookies: Vec<Cookie> = (0..sites)
            .flat_map(|s| {
                let value = &value;
                (0..count).map(move |i| {
                    on_site(
                        cookie(&format!("f{i}"), value),
                        &format!("flood-{s}.example"),
                    )
                })
            })
            .collect();
        jar.absorb(&mut BrowserView::new(), cookies, now_ms);
    }

    fn logins(count: usize) -> Vec<Cookie> {
        (0..count)
            .map(|i| on_site(cookie(&format!("login{i}"), "s"), "bank.example"))
            .collect()
    }

    const HOUR_MS: u64 = 60 * 60 * 1000;

    #[test]
    fn a_flood_of_cookies_on_many_sites_does_not_evict_another_sites_logins() {
        let mut jar = Jar::default();
        let bank = logins(100);
        jar.absorb(&mut BrowserView::new(), bank.clone(), T0);
        flood(&mut jar, 30, SITE_MAX_COOKIES, 8, T0 + HOUR_MS);
        assert_eq!(jar.len(), 100 + 30 * SITE_MAX_COOKIES);

        jar.cap(JAR_LIMITS);
        assert_eq!(jar.len(), JAR_MAX_COOKIES);
        for login in &bank {
            assert!(jar.get(&login.key()).is_some(), "{login:?} evicted");
        }
    }

    /// 220 new small sites of 23 cookies each put the jar over its 5000
    /// entries; the largest site is now an older one's 30 logins, which
    /// must stay all the same.
    #[test]
    fn many_small_new_sites_do_not_evict_an_older_sites_logins() {
        let mut jar = Jar::default();
        let bank = logins(30);
        jar.absorb(&mut BrowserView::new(), bank.clone(), T0);
        flood(&mut jar, 220, 23, 8, T0 + HOUR_MS);
        assert_eq!(jar.len(), 30 + 220 * 23);

        jar.cap(JAR_LIMITS);
        assert_eq!(jar.len(), JAR_MAX_COOKIES);
        for login in &bank {
            assert!(jar.get(&login.key()).is_some(), "{login:?} evicted");
        }
    }

    #[test]
    fn subdomains_count_against_their_registrable_domain() {
        let mut jar = Jar::default();
        let bank = logins(30);
        jar.absorb(&mut BrowserView::new(), bank.clone(), T0);
        let flood: Vec<Cookie> = (0..220)
            .flat_map(|s| {
                (0..23).map(move |i| {
                    on_site(cookie(&format!("f{i}"), "x"), &format!("s{s}.evil.example"))
                })
            })
            .collect();
        jar.absorb(&mut BrowserView::new(), flood, T0 + HOUR_MS);
        jar.cap(JAR_LIMITS);
        assert_eq!(jar.len(), 30 + SITE_MAX_COOKIES);
        for login in &bank {
            assert!(jar.get(&login.key()).is_some(), "{login:?} evicted");
        }
        let site = |domain: &str| site_of(&on_site(cookie("a", "1"), domain));
        assert_eq!(site("login.Bank.co.uk"), "bank.co.uk");
        assert_eq!(site("bank.co.uk"), "bank.co.uk");
        assert_eq!(site("a.b.github.io"), "b.github.io");
        assert_eq!(site("127.0.0.1"), "127.0.0.1");
        assert_eq!(site("localhost"), "localhost");
    }

    #[test]
    fn a_cookie_keeps_its_first_time_through_changes_and_removal() {
        let mut jar = Jar::default();
        let mut view = BrowserView::new();
        let c = cookie("a", "1");
        jar.absorb(&mut view, vec![c.clone()], T0);
        jar.absorb(&mut view, vec![cookie("a", "2")], T0 + 10);
        assert_eq!(jar.get(&c.key()).unwrap().created_at_ms, T0);
        jar.absorb(&mut view, vec![], T0 + 20);
        let gone = jar.get(&c.key()).unwrap();
        assert!(gone.deleted && gone.created_at_ms == T0, "{gone:?}");
    }

    #[test]
    fn one_site_keeps_its_most_recently_changed_cookies_up_to_its_limit() {
        let mut jar = Jar::default();
        let mut view = BrowserView::new();
        let many: Vec<Cookie> = (0..SITE_MAX_COOKIES + 20)
            .map(|i| on_site(cookie(&format!("c{i}"), "v"), "noisy.example"))
            .collect();
        for (i, c) in many.iter().enumerate() {
            jar.absorb(&mut view, vec![c.clone()], T0 + i as u64);
        }
        jar.absorb(&mut BrowserView::new(), logins(3), T0);
        jar.cap(JAR_LIMITS);
        assert_eq!(jar.len(), SITE_MAX_COOKIES + 3);
        assert!(jar.get(&many[19].key()).is_none(), "oldest go");
        assert!(jar.get(&many[20].key()).is_some());
        assert!(jar.get(&many.last().unwrap().key()).is_some());
    }

    #[test]
    fn the_byte_budget_is_taken_from_the_site_with_the_most_bytes() {
        let mut jar = Jar::default();
        let bank = logins(100);
        jar.absorb(&mut BrowserView::new(), bank.clone(), T0);
        // 10 sites of 100 cookies of 4 KB: about 4 MB, fewer than 5000 entries.
        flood(&mut jar, 10, 100, 4096, T0 + HOUR_MS);
        jar.cap(JAR_LIMITS);

        let bytes: usize = jar.entries.values().map(entry_bytes).sum();
        assert!(bytes <= JAR_MAX_BYTES, "{bytes} bytes kept");
        assert!(
            bytes > JAR_MAX_BYTES - 5000,
            "only what is needed goes: {bytes}"
        );
        for login in &bank {
            assert!(jar.get(&login.key()).is_some(), "{login:?} evicted");
        }
        assert!(jar.is_dirty());
    }

    #[test]
    fn cap_breaks_ties_by_key() {
        let mut jar = Jar::default();
        let cookies = vec![cookie("b", "1"), cookie("a", "1"), cookie("c", "1")];
        jar.absorb(&mut BrowserView::new(), cookies, T0);
        jar.cap(entries_only(2));
        let kept: Vec<String> = jar.live(T0).into_iter().map(|c| c.name).collect();
        assert_eq!(kept, ["a", "b"]);
    }

    #[test]
    fn prune_drops_tombstones_older_than_a_week() {
        let mut jar = Jar::default();
        let mut a = BrowserView::new();
        jar.absorb(&mut a, vec![cookie("old", "1"), cookie("new", "1")], T0);
        jar.absorb(&mut a, vec![cookie("new", "1")], T0 + 1000);
        jar.absorb(&mut a, vec![], T0 + 2000);
        let mut saved = jar;
        saved.dirty = false;

        saved.prune(T0 + 1000 + TOMBSTONE_TTL_MS - 1);
        assert_eq!(saved.len(), 2);
        assert!(!saved.is_dirty());
        saved.prune(T0 + 1000 + TOMBSTONE_TTL_MS);
        assert!(saved.get(&cookie("old", "1").key()).is_none());
        assert!(saved.get(&cookie("new", "1").key()).unwrap().deleted);
        assert!(saved.is_dirty());
    }

    fn jar_with(cookies: Vec<Cookie>) -> Jar {
        let mut jar = Jar::default();
        jar.absorb(&mut BrowserView::new(), cookies, T0);
        jar
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn missing_file_is_an_empty_jar_without_warning() {
        let dir = tempfile::tempdir().unwrap();
        let (jar, warning) = Jar::load(&dir.path().join("cookies.json"));
        assert!(jar.is_empty() && !jar.is_dirty());
        assert_eq!(warning, None);
    }

    #[test]
    fn saved_jar_reads_back_with_mode_0600_in_new_0700_folders() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("share/computer-use/cookies.json");
        let mut jar = Jar::default();
        let mut view = BrowserView::new();
        let kept = vec![cookie("sid", "1"), session_cookie("s", "2")];
        let mut with_gone = kept.clone();
        with_gone.push(cookie("gone", "x"));
        jar.absorb(&mut view, with_gone, T0);
        jar.absorb(&mut view, kept, T0 + 1000);
        assert!(jar.is_dirty());
        jar.save(&path).unwrap();
        assert!(!jar.is_dirty());
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp file left: {leftovers:?}");

        let text = fs::read_to_string(&path).unwrap();
        let file: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(file["version"], 1);
        assert_eq!(file["cookies"].as_array().unwrap().len(), 3);

        let (loaded, warning) = Jar::load(&path);
        assert_eq!(warning, None);
        assert!(!loaded.is_dirty());
        assert_eq!(loaded.live(T0), jar.live(T0));
        assert_eq!(loaded.len(), 3);
        assert!(loaded.get(&cookie("gone", "x").key()).unwrap().deleted);
    }

    #[test]
    fn save_replaces_the_file_by_rename_never_writing_into_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cookies.json");
        jar_with(vec![cookie("sid", "old")]).save(&path).unwrap();
        let old_text = fs::read_to_string(&path).unwrap();
        // A reader that opened the old file keeps reading the whole old file.
        let mut old_reader = File::open(&path).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();

        jar_with(vec![cookie("sid", "new"), cookie("more", "new")])
            .save(&path)
            .unwrap();
        let mut still_old = String::new();
        io::Read::read_to_string(&mut old_reader, &mut still_old).unwrap();
        assert_eq!(still_old, old_text);
        let (loaded, _) = Jar::load(&path);
        assert_eq!(loaded.len(), 2);
        assert_eq!(
            mode(&path),
            0o600,
            "a wider old file does not pass on its mode"
        );
    }

    #[test]
    fn a_failed_save_leaves_the_old_file_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cookies.json");
        jar_with(vec![cookie("sid", "old")]).save(&path).unwrap();
        let old_text = fs::read_to_string(&path).unwrap();
        // Something in the temp file's place that cannot be removed as a file.
        fs::create_dir(
            dir.path()
                .join(format!("cookies.json.tmp-{}", std::process::id())),
        )
        .unwrap();

        let mut jar = jar_with(vec![cookie("sid", "new")]);
        assert!(jar.save(&path).is_err());
        assert!(jar.is_dirty(), "still to be saved");
        assert_eq!(fs::read_to_string(&path).unwrap(), old_text);
    }

    /// Runs in a child process with umask 0477, which would make a plain
    /// `create` 0200; see `saved_file_is_0600_whatever_the_umask`.
    #[test]
    fn save_under_a_narrow_umask_child() {
        let Some(dir) = std::env::var_os("COOKIE_JAR_UMASK_TEST_DIR") else {
            return; // Only meaningful as the child of the test below.
        };
        let path = PathBuf::from(dir).join("sub/cookies.json");
        jar_with(vec![cookie("sid", "1")]).save(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
    }

    #[test]
    fn saved_file_is_0600_whatever_the_umask() {
        // The umask is per process and other tests run in parallel threads,
        // so the narrow umask goes to a child running one test.
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                "browser::jar::tests::save_under_a_narrow_umask_child",
                "--nocapture",
            ])
            .env("COOKIE_JAR_UMASK_TEST_DIR", dir.path());
        // SAFETY: umask is async-signal-safe and touches no memory.
        unsafe {
            child.pre_exec(|| {
                libc::umask(0o477);
                Ok(())
            });
        }
        let output = child.output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.contains("1 passed"),
            "child failed: {}\n{stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(mode(&dir.path().join("sub/cookies.json")), 0o600);
    }

    #[test]
    fn corrupt_file_is_moved_to_bad_and_a_new_jar_starts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cookies.json");
        let bad = dir.path().join("cookies.json.bad");
        fs::write(&bad, "an older bad jar").unwrap();
        // The value sits where a number belongs: serde's own message would quote it.
        let corrupt = r#"{"version":1,"cookies":[{"cookie":{"name":"sid","value":"x","domain":"a","path":"/","expires":"s3cr3t-token"},"changedAtMs":1,"deleted":false}]}"#;
        fs::write(&path, corrupt).unwrap();

        let (mut jar, warning) = Jar::load(&path);
        let warning = warning.expect("a warning");
        assert!(jar.is_empty());
        assert!(!warning.contains("s3cr3t"), "{warning}");
        assert!(
            warning.contains("cookies.json.bad") && warning.contains("empty jar"),
            "{warning}"
        );
        assert!(!path.exists());
        assert_eq!(
            fs::read_to_string(&bad).unwrap(),
            corrupt,
            "older .bad replaced"
        );

        jar.absorb(&mut BrowserView::new(), vec![cookie("sid", "1")], T0);
        jar.save(&path).unwrap();
        assert_eq!(Jar::load(&path).0.len(), 1);
    }

    #[test]
    fn invalid_json_and_other_versions_are_bad_files() {
        for (text, says) in [
            ("{not json", "not valid JSON"),
            (r#"{"version":1,"cookies":["#, "ends early"),
            (r#"{"version":2,"cookies":[]}"#, "version 2"),
            (r#"{"cookies":[]}"#, "jar's fields"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("cookies.json");
            fs::write(&path, text).unwrap();
            let (jar, warning) = Jar::load(&path);
            let warning = warning.unwrap_or_default();
            assert!(
                jar.is_empty() && warning.contains(says),
                "{text}: {warning}"
            );
            assert!(dir.path().join("cookies.json.bad").exists());
        }
    }

    #[test]
    fn an_unreadable_file_is_a_bad_file() {
        // A folder where the file should be cannot be read as one.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cookies.json");
        fs::create_dir(&path).unwrap();
        let (jar, warning) = Jar::load(&path);
        assert!(jar.is_empty());
        assert!(warning.unwrap().contains("could not be read"));
        assert!(dir.path().join("cookies.json.bad").is_dir());
    }

    #[test]
    fn loading_skips_opaque_cookies_and_caps_an_oversized_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cookies.json");
        let mut opaque = cookie("opaque", "1");
        opaque.partition_key_opaque = Some(true);
        // Over 50 sites, so no site is over its own limit.
        let mut entries: Vec<JarEntry> = (0..JAR_MAX_COOKIES + 1)
            .map(|i| JarEntry {
                cookie: on_site(
                    cookie(&format!("c{i}"), "v"),
                    &format!("s{}.example", i % 50),
                ),
                changed_at_ms: T0 + i as u64,
                created_at_ms: 0,
                deleted: false,
            })
            .collect();
        entries.push(JarEntry {
            cookie: opaque.clone(),
            changed_at_ms: T0 + 1_000_000,
            created_at_ms: 0,
            deleted: false,
        });
        let file = JarFile {
            version: JAR_VERSION,
            cookies: entries,
        };
        fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();

        let (jar, warning) = Jar::load(&path);
        assert_eq!(warning, None);
        assert_eq!(jar.len(), JAR_MAX_COOKIES);
        assert!(jar.get(&opaque.key()).is_none());
        assert!(
            jar.get(&on_site(cookie("c0", "v"), "s0.example").key())
                .is_none(),
            "oldest of the largest site dropped"
        );
        assert!(jar.is_dirty(), "the capped jar is saved again");
    }

    #[test]
    fn debug_of_jar_views_and_writes_shows_no_value() {
        let mut jar = Jar::default();
        let mut view = BrowserView::new();
        jar.absorb(&mut view, vec![cookie("sid", "s3cr3t-login")], T0);
        let writes = jar.writes_for(&BrowserView::new(), T0);
        let shown = format!("{jar:?} {view:?} {writes:?}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }
}
