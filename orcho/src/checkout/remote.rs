//! The repository a checkout is a clone of, as a team sees it.

use camino::Utf8Path;
use orcho_receipts::exec;

/// The URL of the repository the checkout at `dir` was cloned from: its
/// `origin` remote's, else its only remote's; `None` outside git or with
/// no remote. A password or token in the URL's user part is left out, so
/// that it can be shown to and stored for a team.
///
/// Blocking: it runs `git`.
pub fn repository_url(dir: &Utf8Path) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let outcome = exec::run(&exec::git_request(dir, args).keep_stdout(64 * 1024)).ok()?;
        if !outcome.status.success() {
            return None;
        }
        let text = String::from_utf8(outcome.stdout.kept?).ok()?;
        Some(text.trim().to_owned()).filter(|t| !t.is_empty())
    };
    let url = git(&["config", "--get", "remote.origin.url"]).or_else(|| {
        let remotes = git(&["remote"])?;
        let mut names = remotes.lines();
        let only = names.next()?;
        if names.next().is_some() {
            return None;
        }
        git(&["config", "--get", &format!("remote.{only}.url")])
    })?;
    Some(without_credentials(&url))
}

/// `url` without a password or token in its user part
/// (`https://user:token@host/…` becomes `https://user@host/…`).
fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        // `git@host:owner/repo.git` and paths carry none.
        return url.to_owned();
    };
    let end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(name, _)| name);
            format!("{scheme}://{user}@{host}{path}")
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::without_credentials;

    #[test]
    fn credentials_are_left_out_of_a_remote() {
        assert_eq!(
            without_credentials("https://bot:ghp_secret@github.com/acme/app.git"),
            "https://bot@github.com/acme/app.git"
        );
        assert_eq!(
            without_credentials("https://github.com/acme/app.git"),
            "https://github.com/acme/app.git"
        );
        assert_eq!(
            without_credentials("git@github.com:acme/app.git"),
            "git@github.com:acme/app.git"
        );
        assert_eq!(without_credentials("/srv/git/app.git"), "/srv/git/app.git");
    }
}
