//! Runs moved between stores: [`export_run`] reads everything the seam
//! keeps of a run into a [`RunArchive`] (one JSON line each), and
//! [`import_run`] writes it into another store, of either backend.

use serde::{Deserialize, Serialize};

use super::seam::{Created, Item, Log, NewRun, PointKind, Set, Storage};
use crate::{HandoffId, RunId, StoreError};

/// The version of the archive's lines.
pub const ARCHIVE_VERSION: u32 = 1;

/// One run, everything the storage seam keeps of it: its logs, line by
/// line, and its documents. Bodies are bytes (patches may be binary), kept
/// as lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunArchive {
    /// Always [`ARCHIVE_VERSION`].
    pub archive: u32,
    /// The run.
    pub run: RunId,
    /// The run's journal, one entry per line, without the `\n`.
    pub journal: Vec<String>,
    /// The handoffs' journal.
    pub handoff_journal: Vec<String>,
    /// Every document.
    pub documents: Vec<ArchivedDocument>,
}

/// One document of an archived run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ArchivedDocument {
    /// What it is: `snapshot`, `host`, `evidence`, `question`, `decision`,
    /// `outcome`, `advice`, `waiver`, `delivery_patch`, `intake_seed`.
    pub item: String,
    /// The kind of decision point, for questions and outcomes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// Its id, for documents of which a run has many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The bytes, as hex.
    pub hex: String,
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

fn kind_named(name: &str) -> Option<PointKind> {
    PointKind::ALL.iter().copied().find(|k| k.as_str() == name)
}

fn bad(run: &RunId, what: impl std::fmt::Display) -> StoreError {
    StoreError::backend(
        format!("the archive of run {run} does not read: {what}"),
        None,
    )
}

fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .split('\n')
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

/// Everything `storage` keeps of `run`.
///
/// # Errors
///
/// When something of it cannot be read.
pub fn export_run(storage: &dyn Storage, run: &RunId) -> Result<RunArchive, StoreError> {
    let mut documents = Vec::new();
    let mut keep = |item: Item<'_>, name: &str, point: Option<PointKind>, id: Option<&str>| {
        storage.get(run, item).map(|body| {
            if let Some(body) = body {
                documents.push(ArchivedDocument {
                    item: name.to_owned(),
                    point: point.map(|k| k.as_str().to_owned()),
                    id: id.map(str::to_owned),
                    hex: hex(&body),
                });
            }
        })
    };
    keep(Item::Snapshot, "snapshot", None, None)?;
    keep(Item::HostMetadata, "host", None, None)?;
    keep(Item::Evidence, "evidence", None, None)?;
    keep(Item::DeliveryPatch, "delivery_patch", None, None)?;
    keep(Item::IntakeSeed, "intake_seed", None, None)?;
    for kind in PointKind::ALL.iter().copied() {
        let mut names = storage.list(run, Set::Questions(kind))?;
        names.sort();
        for name in names {
            let Ok(id) = name.parse::<HandoffId>() else {
                continue;
            };
            keep(
                Item::Question(kind, &id),
                "question",
                Some(kind),
                Some(&name),
            )?;
            keep(Item::Decision(&id), "decision", Some(kind), Some(&name))?;
            keep(Item::Outcome(kind, &id), "outcome", Some(kind), Some(&name))?;
        }
    }
    let mut advice = storage.list(run, Set::Advice)?;
    advice.sort();
    for id in &advice {
        keep(Item::Advice(id), "advice", None, Some(id))?;
    }
    let mut waivers = storage.list(run, Set::Waivers)?;
    waivers.sort();
    for name in waivers {
        if let Ok(id) = name.parse::<HandoffId>() {
            keep(Item::Waiver(&id), "waiver", None, Some(&name))?;
        }
    }
    Ok(RunArchive {
        archive: ARCHIVE_VERSION,
        run: run.clone(),
        journal: lines(&storage.read_log(run, Log::Run)?),
        handoff_journal: lines(&storage.read_log(run, Log::Handoffs)?),
        documents,
    })
}

/// The documents an archive may hold.
const KNOWN: &[&str] = &[
    "snapshot",
    "host",
    "evidence",
    "delivery_patch",
    "intake_seed",
    "question",
    "decision",
    "outcome",
    "advice",
    "waiver",
];

/// What [`import_run`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Imported {
    /// The run is in the store now.
    New,
    /// The store had a run of that id already; nothing was written.
    Exists,
}

/// Writes `archive` into `storage` as a new run.
///
/// # Errors
///
/// An archive that does not read (another version, a document of an
/// unknown kind, bad hex, no journal), or a store that cannot be written.
pub fn import_run(storage: &dyn Storage, archive: &RunArchive) -> Result<Imported, StoreError> {
    let run = &archive.run;
    if archive.archive != ARCHIVE_VERSION {
        return Err(bad(
            run,
            format!(
                "archive version {}, this orcho reads {ARCHIVE_VERSION}",
                archive.archive
            ),
        ));
    }
    let Some((first, rest)) = archive.journal.split_first() else {
        return Err(bad(run, "its journal is empty"));
    };
    if storage.has_run(run)? {
        return Ok(Imported::Exists);
    }
    // Every document is checked before anything is written.
    let mut decoded = Vec::new();
    for doc in &archive.documents {
        let body =
            unhex(&doc.hex).ok_or_else(|| bad(run, format!("the {} is not hex", doc.item)))?;
        let point = match doc.point.as_deref() {
            Some(name) => Some(
                kind_named(name)
                    .ok_or_else(|| bad(run, format!("unknown decision point kind `{name}`")))?,
            ),
            None => None,
        };
        if !KNOWN.contains(&doc.item.as_str()) {
            return Err(bad(run, format!("unknown document `{}`", doc.item)));
        }
        let id = doc.id.clone();
        decoded.push((doc.item.as_str(), point, id, body));
    }
    let snapshot = decoded
        .iter()
        .find(|(item, ..)| *item == "snapshot")
        .map(|(.., body)| body.clone())
        .ok_or_else(|| bad(run, "it has no snapshot"))?;
    let host = decoded
        .iter()
        .find(|(item, ..)| *item == "host")
        .map(|(.., body)| body.clone());
    let mut lease = storage.create_run(
        run,
        NewRun::new(first.as_bytes(), &snapshot).with_host_metadata(host.as_deref()),
    )?;
    for line in rest {
        lease.append(line.as_bytes())?;
    }
    drop(lease);
    for line in &archive.handoff_journal {
        storage.append_log(run, Log::Handoffs, line.as_bytes())?;
    }
    for (item, point, id, body) in &decoded {
        let handoff = id.as_deref().map(str::parse::<HandoffId>).transpose();
        let handoff = handoff.map_err(|e| bad(run, e))?;
        let need_id = || {
            handoff
                .as_ref()
                .ok_or_else(|| bad(run, format!("the {item} has no id")))
        };
        let need_point = || point.ok_or_else(|| bad(run, format!("the {item} has no point kind")));
        let target = match *item {
            "snapshot" | "host" => continue,
            "evidence" => Item::Evidence,
            "delivery_patch" => Item::DeliveryPatch,
            "intake_seed" => Item::IntakeSeed,
            "question" => Item::Question(need_point()?, need_id()?),
            "decision" => Item::Decision(need_id()?),
            "outcome" => Item::Outcome(need_point()?, need_id()?),
            "advice" => Item::Advice(
                id.as_deref()
                    .ok_or_else(|| bad(run, "an advice has no id"))?,
            ),
            "waiver" => Item::Waiver(need_id()?),
            other => return Err(bad(run, format!("unknown document `{other}`"))),
        };
        match storage.create(run, target, body)? {
            Created::New | Created::Exists => {}
        }
    }
    Ok(Imported::New)
}
