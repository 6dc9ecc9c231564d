//! `orcho inbox`: the runs waiting for a decision.

use crate::{
    error::CliError,
    host,
    output::{
        Report,
        doc::{InboxDoc, Naming},
        text,
    },
    place::Place,
};

/// The runs of the store waiting for a decision, newest first.
pub(crate) fn inbox(place: &Place) -> Result<Report, CliError> {
    let store = place.store();
    let inbox = store.inbox()?;
    let stopped = host::stopped_runs(&store)?;
    Ok(Report::new(&InboxDoc::new(&inbox, &stopped, Naming::Cli))
        .line(text::inbox(&inbox, &stopped)))
}
