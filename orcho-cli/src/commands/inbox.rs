//! `orcho inbox`: the runs waiting for a decision, as the library's
//! [`Store::team_inbox`](orcho::Store::team_inbox) gathers them.

use orcho::{InboxFilter, InboxPage};

use crate::{
    error::CliError,
    output::{
        Report,
        doc::{InboxDoc, Naming},
        text,
    },
    place::Place,
};

/// The runs of the store waiting for a decision, newest first: with a
/// shared store, those of every machine and checkout, each saying where it
/// was started.
pub(crate) fn inbox(
    place: &Place,
    filter: &InboxFilter,
    page: Option<InboxPage>,
) -> Result<Report, CliError> {
    let store = place.team_store();
    let team = match page {
        Some(page) => store.team_inbox_page(filter, page)?,
        None => store.team_inbox(filter)?,
    };
    Ok(Report::new(&InboxDoc::of(&team, Naming::Cli)).line(text::inbox(&team)))
}
