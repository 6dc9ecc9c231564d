//! `orcho inbox`: the runs waiting for a decision.

use crate::{
    error::CliError,
    exit::Exit,
    host,
    output::{
        self,
        doc::{InboxDoc, Naming},
        text,
    },
    place::Place,
};

/// Lists the runs of the store waiting for a decision, newest first.
pub(crate) fn inbox(place: &Place) -> Result<Exit, CliError> {
    let store = host::store(place);
    let inbox = store.inbox()?;
    let stopped = host::stopped_runs(&store)?;
    if place.json {
        output::json(&InboxDoc::new(&inbox, &stopped, Naming::Cli));
    } else {
        output::out(&text::inbox(&inbox, &stopped));
    }
    Ok(Exit::Ok)
}
