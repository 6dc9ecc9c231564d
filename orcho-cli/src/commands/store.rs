//! `orcho store`: a shared store's schema, and runs moved between stores
//! (a directory and a database, either way).

use std::io::{BufRead, Write};

use camino::Utf8Path;
use orcho::core::storage::archive::{self, Imported, RunArchive};
use serde::Serialize;

use crate::{error::CliError, output::Report, place::Place};

#[derive(Debug, Serialize)]
struct MigratedDoc {
    store: String,
    schema_before: i32,
    schema: i32,
}

/// `orcho store migrate`.
pub(crate) fn migrate(place: &Place) -> Result<Report, CliError> {
    let Some(shared) = &place.shared else {
        return Ok(
            Report::new(&serde_json::json!({"store": place.store, "schema": null})).line(format!(
                "the store `{}` is a directory: it has no schema to migrate",
                place.store
            )),
        );
    };
    let before = shared
        .migrate()
        .map_err(|e| CliError::msg(orcho::core::error_chain(&e)))?;
    let location = orcho::core::storage::Storage::location(shared);
    let line = if before == orcho_pg::SCHEMA_VERSION {
        format!(
            "the store at {location} is at schema version {before}, this orcho's: nothing to do"
        )
    } else {
        format!(
            "the store at {location} is at schema version {} (it was {before})",
            orcho_pg::SCHEMA_VERSION
        )
    };
    Ok(Report::new(&MigratedDoc {
        store: location,
        schema_before: before,
        schema: orcho_pg::SCHEMA_VERSION,
    })
    .line(line))
}

#[derive(Debug, Serialize)]
struct ExportedDoc<'a> {
    runs: Vec<&'a orcho::core::RunId>,
    output: Option<&'a Utf8Path>,
}

/// `orcho store export`.
pub(crate) fn export(
    place: &Place,
    runs: &[String],
    output: Option<&Utf8Path>,
) -> Result<Report, CliError> {
    let store = place.store();
    let runs = if runs.is_empty() {
        store
            .list()?
            .iter()
            .map(|l| l.run().clone())
            .rev()
            .collect()
    } else {
        runs.iter()
            .map(|r| store.find_run(r))
            .collect::<Result<Vec<_>, _>>()?
    };
    let storage = place.storage();
    let mut text = Vec::new();
    for run in &runs {
        let archive = archive::export_run(&*storage, run)
            .map_err(|e| CliError::msg(orcho::core::error_chain(&e)))?;
        serde_json::to_writer(&mut text, &archive)
            .map_err(|e| CliError::msg(format!("cannot write the archive of {run}: {e}")))?;
        text.push(b'\n');
    }
    match output {
        Some(path) => orcho::core::fs::write_atomic(path, &text)
            .map_err(|e| CliError::msg(orcho::core::error_chain(&e)))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&text)?;
            out.flush()?;
        }
    }
    let said = format!(
        "exported {} run{}{}",
        runs.len(),
        if runs.len() == 1 { "" } else { "s" },
        output.map_or_else(String::new, |p| format!(" to {p}"))
    );
    Ok(match output {
        Some(output) => Report::new(&ExportedDoc {
            runs: runs.iter().collect(),
            output: Some(output),
        })
        .line(said),
        // The runs went to standard output: the count goes beside them.
        None => {
            crate::output::err(&said);
            Report::silent(crate::exit::Exit::Ok)
        }
    })
}

#[derive(Debug, Serialize)]
struct ImportedDoc {
    imported: Vec<String>,
    existing: Vec<String>,
}

/// `orcho store import`.
pub(crate) fn import(place: &Place, file: &Utf8Path) -> Result<Report, CliError> {
    let reader: Box<dyn BufRead> = if file == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let opened = std::fs::File::open(file)
            .map_err(|e| CliError::msg(format!("cannot read `{file}`: {e}")))?;
        Box::new(std::io::BufReader::new(opened))
    };
    // Every line is read before anything is written.
    let mut archives = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| CliError::msg(format!("cannot read `{file}`: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let archive: RunArchive = serde_json::from_str(&line).map_err(|e| {
            CliError::msg(format!(
                "`{file}` line {}: not a run `orcho store export` wrote: {e}",
                n + 1
            ))
            .with_hint("`orcho store export > runs.jsonl` writes one run per line")
        })?;
        archives.push(archive);
    }
    let storage = place.storage();
    let mut doc = ImportedDoc {
        imported: Vec::new(),
        existing: Vec::new(),
    };
    for archive in &archives {
        match archive::import_run(&*storage, archive)
            .map_err(|e| CliError::msg(orcho::core::error_chain(&e)))?
        {
            Imported::New => doc.imported.push(archive.run.to_string()),
            _ => doc.existing.push(archive.run.to_string()),
        }
    }
    let existing = if doc.existing.is_empty() {
        String::new()
    } else {
        format!(
            "; already there, left as they are: {}",
            doc.existing.join(", ")
        )
    };
    let line = format!(
        "imported {} run{} into {}{existing}",
        doc.imported.len(),
        if doc.imported.len() == 1 { "" } else { "s" },
        storage.location()
    );
    Ok(Report::new(&doc).line(line))
}
