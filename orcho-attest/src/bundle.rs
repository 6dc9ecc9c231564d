//! A note's text: JSON Lines, one DSSE envelope per line.
//!
//! One envelope per line keeps a note well-formed under git's own note
//! merges (`git notes merge -s cat_sort_uniq` sorts and de-duplicates
//! lines). Lines Orcho cannot read (another tool's, a torn write) are kept
//! as they are and reported when the note is checked; they never count as
//! proof.

use crate::{
    PublicKey,
    dsse::{Envelope, EnvelopeError},
    statement::Statement,
};

/// The largest note read, in bytes: a bigger one is refused whole.
pub const MAX_NOTE_BYTES: usize = 4 << 20;

/// The lines of a note.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bundle {
    lines: Vec<String>,
}

/// A note over [`MAX_NOTE_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the note is {bytes} bytes, over the {MAX_NOTE_BYTES}-byte cap on what Orcho reads")]
#[non_exhaustive]
pub struct TooLarge {
    /// Its size.
    pub bytes: usize,
}

impl Bundle {
    /// Reads a note's bytes: each non-blank line is one entry (invalid
    /// UTF-8 is kept, replaced, and will not read as an envelope).
    ///
    /// # Errors
    ///
    /// A note over [`MAX_NOTE_BYTES`].
    pub fn parse(bytes: &[u8]) -> Result<Self, TooLarge> {
        if bytes.len() > MAX_NOTE_BYTES {
            return Err(TooLarge { bytes: bytes.len() });
        }
        let lines = bytes
            .split(|&b| b == b'\n')
            .map(String::from_utf8_lossy)
            .map(|line| line.trim().to_owned())
            .filter(|line| !line.is_empty())
            .collect();
        Ok(Self { lines })
    }

    /// Its lines, each with its number (from 1) and the envelope it reads
    /// as.
    pub fn entries(&self) -> impl Iterator<Item = (usize, Result<Envelope, EnvelopeError>)> + '_ {
        self.lines
            .iter()
            .enumerate()
            .map(|(i, line)| (i + 1, Envelope::from_json(line)))
    }

    /// Its lines, each with its number (from 1), as text.
    pub fn lines(&self) -> impl Iterator<Item = (usize, &str)> + '_ {
        self.lines
            .iter()
            .enumerate()
            .map(|(i, line)| (i + 1, line.as_str()))
    }

    /// How many lines it has.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Adds `envelope`, signed by `key`, of a statement about command
    /// `command` that finished at `finished_at`: an earlier envelope of the
    /// same command that `key` signed is replaced; a later one is kept and
    /// `envelope` dropped. Lines `key` did not sign are never touched, so
    /// a line made to look like this key's cannot push a real one out.
    /// Returns whether `envelope` was kept.
    pub fn merge(&mut self, envelope: &Envelope, key: &PublicKey) -> bool {
        let Ok(new) = Statement::from_payload(&envelope.payload) else {
            return false;
        };
        let keys = [*key];
        let mut newer_exists = false;
        self.lines.retain(|line| {
            let Ok(old) = Envelope::from_json(line) else {
                return true;
            };
            if old.signed_by(&keys, |k| k).is_none() {
                return true;
            }
            let Ok(statement) = Statement::from_payload(&old.payload) else {
                return true;
            };
            if statement.orcho.command != new.orcho.command {
                return true;
            }
            if statement.orcho.finished_at > new.orcho.finished_at {
                newer_exists = true;
                return true;
            }
            false
        });
        if newer_exists {
            return false;
        }
        self.lines.push(envelope.to_json());
        true
    }

    /// The note's text: one line per entry.
    pub fn to_text(&self) -> String {
        let mut text = self.lines.join("\n");
        text.push('\n');
        text
    }
}
