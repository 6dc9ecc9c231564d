//! `orcho inbox`: the runs waiting for a decision, as the library's
//! [`Store::team_inbox`](orcho::Store::team_inbox) gathers them.

use orcho::InboxFilter;

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
pub(crate) fn inbox(place: &Place, filter: &InboxFilter) -> Result<Report, CliError> {
    let team = place.team_store().team_inbox(filter)?;
    Ok(Report::new(
        &InboxDoc::new(&team.inbox, &team.stopped, Naming::Cli).with_origins(&team.origins),
    )
    .line(text::inbox(&team.inbox, &team.stopped, &team.origins)))
}
