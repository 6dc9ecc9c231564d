//! [`Report`]: what a command hands the one renderer.

use serde::Serialize;

use super::{err, json_line, out};
use crate::exit::Exit;

/// What a command reports: the JSON document printed under `--json`, the
/// text printed for a person otherwise, and how the command ends. Commands
/// build one and never print their result themselves; [`render`](Self::render)
/// does, in one place.
#[derive(Debug)]
#[must_use]
pub struct Report {
    json: Option<String>,
    out: Vec<String>,
    err: Vec<String>,
    exit: Exit,
}

impl Report {
    /// A report whose JSON form is `doc`.
    pub fn new(doc: &impl Serialize) -> Self {
        Self {
            json: Some(json_line(doc)),
            out: Vec::new(),
            err: Vec::new(),
            exit: Exit::Ok,
        }
    }

    /// A report with no JSON form: its text is printed either way (a
    /// schema, shell completions).
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            json: None,
            out: vec![text.into()],
            err: Vec::new(),
            exit: Exit::Ok,
        }
    }

    /// A report that prints nothing more: what the command had to say it
    /// said as it went.
    pub fn silent(exit: Exit) -> Self {
        Self {
            json: None,
            out: Vec::new(),
            err: Vec::new(),
            exit,
        }
    }

    /// Adds `text` to what a person reads on standard output.
    pub fn line(mut self, text: impl Into<String>) -> Self {
        self.out.push(text.into());
        self
    }

    /// Adds `text` to what a person reads on standard error (a note beside
    /// the result).
    pub fn note(mut self, text: impl Into<String>) -> Self {
        self.err.push(text.into());
        self
    }

    /// Ends the command with `exit`.
    pub fn exit(mut self, exit: Exit) -> Self {
        self.exit = exit;
        self
    }

    /// The JSON document and how the command ends (for a host that returns
    /// the document itself, such as MCP).
    pub fn into_document(self) -> (Option<String>, Exit) {
        (self.json, self.exit)
    }

    /// Prints the report: its JSON document with `--json` (when it has
    /// one), else its text; returns how the command ends.
    pub fn render(self, json: bool) -> Exit {
        match (&self.json, json) {
            (Some(doc), true) => out(doc),
            _ => {
                for line in &self.err {
                    err(line);
                }
                for line in &self.out {
                    out(line);
                }
            }
        }
        self.exit
    }
}
