//! Connections: the URL a user gives (checked, and said without its
//! password), opening one, prepared statements, and what a failure says.

use std::{collections::HashMap, fmt, str::FromStr, sync::Arc, time::Duration};

use orcho_core::StoreError;
use tokio::sync::Mutex;
use tokio_postgres::{Client, Config, Statement, config::SslMode, error::SqlState};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How long opening a connection may take when the URL does not say
/// (`connect_timeout`): the TCP connection, TLS and the login together, so
/// that a server that accepts a connection and never answers is given up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one request to the store may wait for the server's answers,
/// beyond opening a connection: a server that stops answering ends the
/// command with an error, never hangs it.
pub(crate) const STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);

/// Keepalives on both ends of every connection: a peer that stopped
/// answering is dropped after `IDLE + INTERVAL * PROBES` (40 s).
const KEEPALIVE_IDLE: Duration = Duration::from_secs(10);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
const KEEPALIVE_PROBES: u32 = 3;

/// A PostgreSQL URL, checked, with a form to show that has no password.
#[derive(Clone)]
pub(crate) struct Target {
    config: Config,
    shown: String,
    tls: MakeRustlsConnect,
}

impl fmt::Debug for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Target").field(&self.shown).finish()
    }
}

/// A URL that is not a PostgreSQL URL Orcho can use.
#[derive(Debug, thiserror::Error)]
#[error("`{shown}` is not a PostgreSQL URL Orcho can use: {reason}")]
pub struct UrlError {
    shown: String,
    reason: String,
}

impl UrlError {
    /// The URL, without its password.
    pub fn url(&self) -> &str {
        &self.shown
    }
}

impl Target {
    pub(crate) fn parse(url: &str) -> Result<Self, UrlError> {
        let shown = redact(url);
        let fail = |reason: String| UrlError {
            shown: shown.clone(),
            reason,
        };
        if !is_url(url) {
            return Err(fail(
                "it must start with `postgres://` or `postgresql://`".to_owned(),
            ));
        }
        let mut config = Config::from_str(url).map_err(|e| fail(without_password(&e, url)))?;
        if config.get_hosts().is_empty() {
            return Err(fail(
                "it names no host (write `postgres://USER@HOST:PORT/DATABASE`)".to_owned(),
            ));
        }
        if config.get_dbname().is_none() {
            return Err(fail(
                "it names no database (write `postgres://USER@HOST:PORT/DATABASE`)".to_owned(),
            ));
        }
        // libpq's variable, when the URL gives no password.
        if config.get_password().is_none()
            && let Some(password) = std::env::var_os("PGPASSWORD")
        {
            config.password(password.as_encoded_bytes());
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        // A host cut off from the network is noticed by keepalives, not
        // after hours: here, and by the server, which then ends the host's
        // sessions and so its leases (session locks). The URL's own
        // `options` come after, and win.
        config
            .keepalives(true)
            .keepalives_idle(KEEPALIVE_IDLE)
            .keepalives_interval(KEEPALIVE_INTERVAL)
            .keepalives_retries(KEEPALIVE_PROBES);
        let server_side = format!(
            "-c tcp_keepalives_idle={} -c tcp_keepalives_interval={} -c tcp_keepalives_count={}",
            KEEPALIVE_IDLE.as_secs(),
            KEEPALIVE_INTERVAL.as_secs(),
            KEEPALIVE_PROBES
        );
        let options = match config.get_options() {
            Some(given) => format!("{server_side} {given}"),
            None => server_side,
        };
        config.options(&options);
        if config.get_application_name().is_none() {
            config.application_name("orcho");
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let tls = MakeRustlsConnect::with_webpki_roots();
        Ok(Self { config, shown, tls })
    }

    /// The URL without its password.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// How long opening a connection may take: the URL's
    /// `connect_timeout`, else 10 s.
    pub(crate) fn connect_timeout(&self) -> Duration {
        self.config
            .get_connect_timeout()
            .copied()
            .unwrap_or(CONNECT_TIMEOUT)
    }

    /// What a connection that took longer than [`connect_timeout`] says.
    fn connect_timed_out(&self) -> StoreError {
        StoreError::backend(
            format!(
                "cannot connect to the store at {}: no answer within {}s (a server that accepts \
                 connections but does not answer: is it PostgreSQL, on that port, and not \
                 stuck?); `connect_timeout=SECONDS` in the URL sets how long to wait",
                self.shown,
                self.connect_timeout().as_secs()
            ),
            None,
        )
    }

    /// Whether TLS is asked for.
    #[cfg_attr(not(test), expect(dead_code, reason = "read by tests"))]
    pub(crate) fn tls(&self) -> bool {
        self.config.get_ssl_mode() != SslMode::Disable
    }

    /// Opens a connection whose messages the caller drives (for LISTEN):
    /// the client, and the messages that are not answers to queries, until
    /// the connection ends.
    pub(crate) async fn connect_listening(
        &self,
    ) -> Result<(Client, tokio::sync::mpsc::UnboundedReceiver<()>), StoreError> {
        let (client, mut connection) = tokio::time::timeout(
            self.connect_timeout(),
            self.config.connect(self.tls.clone()),
        )
        .await
        .map_err(|_| self.connect_timed_out())?
        .map_err(|e| self.error("cannot connect to the store", &e))?;
        let (heard, hear) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            loop {
                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                    Some(Ok(tokio_postgres::AsyncMessage::Notification(_))) => {
                        if heard.send(()).is_err() {
                            break;
                        }
                    }
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => break,
                }
            }
        });
        Ok((client, hear))
    }

    /// Opens a connection, driven on the current (the bridge's) runtime.
    pub(crate) async fn connect(&self) -> Result<Arc<Conn>, StoreError> {
        // tokio-postgres bounds the TCP connection only: the login is
        // bounded here too.
        let (client, connection) = tokio::time::timeout(
            self.connect_timeout(),
            self.config.connect(self.tls.clone()),
        )
        .await
        .map_err(|_| self.connect_timed_out())?
        .map_err(|e| self.error("cannot connect to the store", &e))?;
        tokio::spawn(async move {
            // Ends when the client is dropped or the server goes away; the
            // next query on the client then says so.
            let _ = connection.await;
        });
        Ok(Arc::new(Conn {
            client,
            statements: Mutex::new(HashMap::new()),
        }))
    }

    /// A failure of `what` at this store, in one line a person can act on,
    /// never with the password.
    pub(crate) fn error(&self, what: &str, e: &tokio_postgres::Error) -> StoreError {
        StoreError::backend(format!("{what} at {}: {}", self.shown, reason(e)), None)
    }
}

/// Whether `s` is a PostgreSQL URL (`postgres://` or `postgresql://`).
pub(crate) fn is_url(s: &str) -> bool {
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

/// What a client error means, in a few words.
fn reason(e: &tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        return if *code == SqlState::INVALID_PASSWORD {
            "the password was refused".to_owned()
        } else if *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION {
            format!("the server refused the login ({})", db.message())
        } else if *code == SqlState::INVALID_CATALOG_NAME {
            format!("{} (create it, or name another in the URL)", db.message())
        } else if *code == SqlState::ADMIN_SHUTDOWN
            || *code == SqlState::CRASH_SHUTDOWN
            || *code == SqlState::CANNOT_CONNECT_NOW
        {
            format!("the server is shutting down or starting ({})", db.message())
        } else {
            db.message().to_owned()
        };
    }
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text = format!("{text}: {c}");
        cause = c.source();
    }
    if text.contains("password missing") {
        return "the server asks for a password, and neither the URL nor PGPASSWORD gives one"
            .to_owned();
    }
    if e.is_closed() {
        return "the connection was closed (did the server restart? the next command \
                connects again)"
            .to_owned();
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            return match io.kind() {
                std::io::ErrorKind::ConnectionRefused => {
                    "connection refused (is the server running, on that host and port?)".to_owned()
                }
                std::io::ErrorKind::TimedOut => "the connection timed out".to_owned(),
                _ => io.to_string(),
            };
        }
        source = s.source();
    }
    if text.contains("timeout") {
        return "the connection timed out".to_owned();
    }
    if text.contains("TLS") || text.contains("tls") {
        return format!(
            "{text} (does the server speak TLS? `sslmode=disable` for one that does not)"
        );
    }
    text
}

/// The parser's message, with the password of `url` cut out should it
/// quote it.
fn without_password(e: &tokio_postgres::Error, url: &str) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    if let Some(password) = password_of(url).filter(|p| !p.is_empty()) {
        text = text.replace(password, "***");
    }
    text
}

/// The password in the user-info of `url`, or its `password=` parameter.
fn password_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    if let Some((_, password)) = authority
        .rsplit_once('@')
        .and_then(|(userinfo, _)| userinfo.split_once(':'))
    {
        return Some(password);
    }
    let query = rest.split_once('?')?.1;
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("password="))
}

/// `url` without its password (in the user-info or as a parameter).
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "<not a URL>".to_owned();
    };
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split_once(':').map_or(userinfo, |(u, _)| u);
            format!("{user}@{host}")
        }
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|pair| !pair.starts_with("password="))
                .collect();
            if kept.is_empty() {
                path.to_owned()
            } else {
                format!("{path}?{}", kept.join("&"))
            }
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// One connection, and the statements prepared on it.
pub(crate) struct Conn {
    pub(crate) client: Client,
    statements: Mutex<HashMap<&'static str, Statement>>,
}

impl fmt::Debug for Conn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conn")
            .field("closed", &self.client.is_closed())
            .finish_non_exhaustive()
    }
}

impl Conn {
    /// `sql`, prepared once per connection.
    pub(crate) async fn statement(
        &self,
        sql: &'static str,
    ) -> Result<Statement, tokio_postgres::Error> {
        if let Some(statement) = self.statements.lock().await.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(sql).await?;
        self.statements.lock().await.insert(sql, statement.clone());
        Ok(statement)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ends_keep_the_connection_alive_and_the_urls_options_win() -> Result<(), UrlError> {
        let target = Target::parse("postgres://alice@db.example/orcho")?;
        let options = target.config.get_options().unwrap_or_default();
        assert_eq!(
            options,
            "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=3"
        );
        assert_eq!(target.config.get_keepalives_idle(), KEEPALIVE_IDLE);
        let target = Target::parse(
            "postgres://alice@db.example/orcho?options=-c%20tcp_keepalives_idle%3D60",
        )?;
        let options = target.config.get_options().unwrap_or_default();
        assert!(options.ends_with("-c tcp_keepalives_idle=60"), "{options}");
        Ok(())
    }

    #[test]
    fn a_shown_url_has_no_password() {
        assert_eq!(
            redact("postgres://alice:s3cret@db.example:5432/orcho?sslmode=require"),
            "postgres://alice@db.example:5432/orcho?sslmode=require"
        );
        assert_eq!(
            redact("postgresql://db/orcho?password=s3cret&sslmode=disable"),
            "postgresql://db/orcho?sslmode=disable"
        );
        assert_eq!(
            redact("postgres://db/orcho?password=x"),
            "postgres://db/orcho"
        );
        assert_eq!(redact("postgres://a:b:c@h/d"), "postgres://a@h/d");
        assert_eq!(redact("nonsense"), "<not a URL>");
    }

    #[test]
    fn a_bad_url_is_refused_without_its_password() {
        for url in [
            "mysql://alice:s3cret@db/orcho",
            "postgres://alice:s3cret@db/orcho?sslmode=maybe",
            "postgres://alice:s3cret@db/orcho?unknown=1",
            "postgres://alice:s3cret@/orcho",
            "postgres://alice:s3cret@db",
        ] {
            let e = Target::parse(url).unwrap_err();
            let text = e.to_string();
            assert!(!text.contains("s3cret"), "{text}");
            assert!(
                text.contains("postgres") || text.contains("mysql"),
                "{text}"
            );
            assert!(
                !text.ends_with("invalid connection string"),
                "says why: {text}"
            );
        }
    }

    #[test]
    fn sslmode_decides_tls() {
        assert!(
            Target::parse("postgres://db/orcho?sslmode=require")
                .unwrap()
                .tls()
        );
        assert!(
            !Target::parse("postgres://db/orcho?sslmode=disable")
                .unwrap()
                .tls()
        );
    }
}
