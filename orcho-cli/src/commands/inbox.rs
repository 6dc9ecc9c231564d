//! `orcho inbox`: the runs waiting for a decision.

use orcho::{
    core::storage::RunOrigin,
    handoff::inbox::{Inbox, InboxEntry},
};

use crate::{
    error::CliError,
    host,
    output::{
        Report,
        doc::{InboxDoc, Naming, Origins},
        text,
    },
    place::Place,
};

/// Which runs `orcho inbox` lists.
#[derive(Debug, Default)]
pub(crate) struct Filter {
    /// Only those started from this machine and checkout.
    pub(crate) mine: bool,
    /// Only those of a repository (or checkout path) containing this.
    pub(crate) repo: Option<String>,
}

impl Filter {
    fn keeps(&self, origin: Option<&RunOrigin>) -> bool {
        // A store only this checkout uses has every run here.
        let Some(origin) = origin else { return true };
        if self.mine && !origin.here {
            return false;
        }
        self.repo.as_deref().is_none_or(|repo| {
            origin.checkout.contains(repo)
                || origin
                    .repository
                    .as_deref()
                    .is_some_and(|r| r.contains(repo))
        })
    }
}

/// The runs of the store waiting for a decision, newest first: with a
/// shared store, those of every machine and checkout, each saying where it
/// was started.
pub(crate) fn inbox(place: &Place, filter: &Filter) -> Result<Report, CliError> {
    let (inbox, stopped, origins) = gather(&place.team_store(), filter)?;
    Ok(
        Report::new(&InboxDoc::new(&inbox, &stopped, Naming::Cli).with_origins(&origins))
            .line(text::inbox(&inbox, &stopped, &origins)),
    )
}

/// The pending decisions and stopped runs of `store` that `filter` keeps,
/// and where each run was started (with a shared store).
pub(crate) fn gather(
    store: &orcho::Store,
    filter: &Filter,
) -> Result<(Inbox, Vec<orcho::RunView>, Origins), CliError> {
    let mut inbox = store.inbox()?;
    let mut stopped = host::stopped_runs(store)?;
    let mut origins = Origins::new();
    let runs = inbox
        .pending()
        .map(|p| p.run().clone())
        .chain(stopped.iter().map(|v| v.run.clone()))
        .collect::<Vec<_>>();
    for run in runs {
        if !origins.contains_key(&run)
            && let Some(origin) = store.origin(&run)?
        {
            origins.insert(run, origin);
        }
    }
    inbox.retain(|entry| match entry {
        InboxEntry::Pending(p) => filter.keeps(origins.get(p.run())),
        _ => true,
    });
    stopped.retain(|view| filter.keeps(origins.get(&view.run)));
    Ok((inbox, stopped, origins))
}
