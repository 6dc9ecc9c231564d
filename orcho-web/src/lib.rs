//! `orcho serve`: the inbox and every run on a web page and a JSON API,
//! to look and decide from a phone or another machine.
//!
//! Bound to 127.0.0.1 by default; a non-loopback address needs
//! `--insecure-listen` (put a reverse proxy with TLS in front). Who may look
//! and decide is a named token ([`tokens`]): sent as `Authorization:
//! Bearer` to the API, or exchanged once for a session cookie by the login
//! link `orcho serve token add` prints. Every form carries a CSRF token;
//! every text from runs is escaped (maud escapes by default) and the pages
//! forbid inline scripts.

mod api;
mod pages;
mod points;
mod session;
pub mod tokens;

use std::{net::SocketAddr, sync::Arc, time::Duration};

use axum::{
    Router,
    extract::DefaultBodyLimit,
    http::{HeaderValue, header},
    routing::{get, post},
};

use orcho_host::{error::CliError, place::Place};

/// The largest request body accepted (a decision is a few hundred bytes).
const BODY_LIMIT: usize = 64 * 1024;

/// What every handler shares.
#[derive(Debug, Clone)]
pub(crate) struct Web {
    place: Arc<Place>,
    tokens: tokens::Tokens,
    sessions: session::Sessions,
    /// Turns true at Ctrl-C: the live streams end, so that the server's
    /// graceful stop does not wait for open pages.
    stopping: tokio::sync::watch::Receiver<bool>,
}

/// Serves the inbox at `listen` until interrupted.
pub async fn serve(place: &Place, listen: SocketAddr, insecure: bool) -> Result<(), CliError> {
    if !listen.ip().is_loopback() && !insecure {
        return Err(CliError::usage(format!(
            "`{listen}` is reachable from other machines, and `orcho serve` speaks plain HTTP"
        ))
        .with_hint(
            "serve on 127.0.0.1 behind a reverse proxy with TLS (docs/web.md), or say \
             `--insecure-listen` to serve plain HTTP on that address anyway",
        ));
    }
    let tokens = tokens::Tokens::of_user()?;
    orcho_host::key::refuse_inside_place(tokens.path(), place, "token file")?;
    let (stop, stopping) = tokio::sync::watch::channel(false);
    let web = Web {
        place: Arc::new(place.clone()),
        tokens,
        sessions: session::Sessions::default(),
        stopping,
    };
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| CliError::msg(format!("cannot listen on {listen}: {e}")))?;
    let bound = listener.local_addr()?;
    // Listening for Ctrl-C before saying the server is up: registered only
    // once the shutdown future is first polled, a Ctrl-C right after the
    // announcement met the default action and killed the server.
    let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| CliError::msg(format!("cannot listen for Ctrl-C: {e}")))?;
    orcho_host::output::err(&format!(
        "serving the inbox at http://{bound}/ (log in with the link `orcho serve token add NAME` \
         prints; Ctrl-C stops)"
    ));
    if !listen.ip().is_loopback() {
        orcho_host::output::err(
            "warning: serving plain HTTP to other machines: tokens and cookies cross the network \
             unencrypted",
        );
    }
    // The store's notifiers are sent what happens, whoever made it happen,
    // for as long as the server runs.
    let delivering = Arc::new(std::sync::atomic::AtomicBool::new(true));
    {
        let (store, going) = (place.team_store(), Arc::clone(&delivering));
        std::thread::spawn(move || {
            orcho_notify::watch(
                &store,
                &orcho_notify::Sender::new(),
                &orcho_notify::Retry::default(),
                Duration::from_secs(2),
                &|| !going.load(std::sync::atomic::Ordering::Relaxed),
                &mut |e| {
                    orcho_host::output::err(&format!(
                        "warning: notifications: {}",
                        orcho::core::error_chain(e)
                    ));
                },
            );
        });
    }
    let served = axum::serve(listener, router(web))
        .with_graceful_shutdown(async move {
            let _ = interrupt.recv().await;
            let _ = stop.send(true);
            orcho_host::output::err(
                "stopping: the requests under way finish, then the server exits",
            );
        })
        .await
        .map_err(|e| CliError::msg(format!("the server stopped: {e}")));
    delivering.store(false, std::sync::atomic::Ordering::Relaxed);
    served
}

fn router(web: Web) -> Router {
    Router::new()
        .route("/", get(pages::inbox))
        .route("/login", get(session::login))
        .route("/logout", post(session::logout))
        .route("/runs/{run}", get(pages::run))
        .route("/runs/{run}/decisions/handoff", post(pages::decide_handoff))
        .route(
            "/runs/{run}/decisions/delivery",
            post(pages::decide_delivery),
        )
        .route(
            "/runs/{run}/decisions/touchpoint",
            post(points::decide_touchpoint),
        )
        .route("/runs/{run}/decisions/intake", post(points::decide_intake))
        .route("/runs/{run}/decisions/point", post(points::decide_point))
        .route("/runs/{run}/advice", post(pages::ask_advice))
        .route("/events", get(pages::events))
        .route("/static/live.js", get(pages::live_js))
        .route("/api/inbox", get(api::inbox))
        .route("/api/runs/{run}", get(api::run))
        .route(
            "/api/runs/{run}/decisions/delivery",
            post(api::decide_delivery),
        )
        .route(
            "/api/runs/{run}/decisions/handoff",
            post(api::decide_handoff),
        )
        .route("/api/runs/{run}/decisions/plan", post(api::decide_plan))
        .route(
            "/api/runs/{run}/decisions/questions",
            post(api::decide_questions),
        )
        .route(
            "/api/runs/{run}/decisions/deviation",
            post(api::decide_deviation),
        )
        .route("/api/runs/{run}/decisions/intake", post(api::decide_intake))
        .route("/api/runs/{run}/point", get(api::point))
        .route("/api/runs/{run}/decisions", post(api::decide_point))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn_with_state(
            web.clone(),
            store_down,
        ))
        .layer(axum::middleware::from_fn(same_origin))
        .layer(axum::middleware::map_response(secure_headers))
        .with_state(web)
}

/// How long a shared store has to answer when a request failed, before
/// the answer says it is down.
const STORE_ASKED_WITHIN: Duration = Duration::from_secs(2);

/// A request that failed while the shared store cannot be reached is said
/// as that: 503 with `Retry-After`, so that a person (or a program) tries
/// again instead of reading the database's silence as a wrong request.
async fn store_down(
    axum::extract::State(web): axum::extract::State<Web>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::{http::StatusCode, response::IntoResponse as _};
    let api = request.uri().path().starts_with("/api/");
    let response = next.run(request).await;
    let failed = matches!(
        response.status(),
        StatusCode::UNPROCESSABLE_ENTITY | StatusCode::INTERNAL_SERVER_ERROR
    );
    let Some(shared) = web.place.shared.clone().filter(|_| failed) else {
        return response;
    };
    let down = tokio::task::spawn_blocking(move || !shared.reachable(STORE_ASKED_WITHIN))
        .await
        .unwrap_or(true);
    if !down {
        return response;
    }
    let error = "the shared store cannot be reached; nothing was read or recorded";
    let hint = "try again in a moment; `orcho inbox` on a machine of the team says whether the \
                database answers there";
    let mut down = if api {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(serde_json::json!({
                "error": error,
                "hint": hint,
                "exit_code": orcho_host::exit::ERROR,
            })),
        )
            .into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            maud::html! {
                (maud::DOCTYPE)
                html lang="en" { head { meta charset="utf-8"; title { "Orcho: try again" } }
                    body { h1 { "The store cannot be reached" } p { (error) "." } p { (hint) "." }
                        p { a href="/" { "Try again" } } } }
            },
        )
            .into_response()
    };
    down.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    down
}

/// Refuses a request that changes something (anything but `GET` and
/// `HEAD`) sent from another origin: a browser says where a form or a
/// script was when it sends one (`Origin`), and only this server's own
/// pages may post to it. A request without `Origin` (`curl`, a program
/// with a bearer token) goes on to its token and CSRF checks.
async fn same_origin(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::{http::Method, response::IntoResponse as _};
    if matches!(*request.method(), Method::GET | Method::HEAD) {
        return next.run(request).await;
    }
    let headers = request.headers();
    let Some(origin) = headers.get(header::ORIGIN) else {
        return next.run(request).await;
    };
    let authority = origin
        .to_str()
        .ok()
        .and_then(|o| o.split_once("://"))
        .map(|(_, authority)| authority.trim_end_matches('/'));
    let here = [header::HOST.as_str(), "x-forwarded-host"]
        .into_iter()
        .filter_map(|name| headers.get(name).and_then(|v| v.to_str().ok()));
    let ours = authority.is_some_and(|a| here.into_iter().any(|h| h.eq_ignore_ascii_case(a)));
    if ours {
        return next.run(request).await;
    }
    let said = origin.to_str().unwrap_or("(not text)");
    (
        axum::http::StatusCode::FORBIDDEN,
        axum::Json(serde_json::json!({
            "error": format!("a request from another origin ({said}) may not change anything here"),
            "hint": "decide from this server's own pages, or from a program without a browser \
                     (with a bearer token)",
            "exit_code": orcho_host::exit::USAGE,
        })),
    )
        .into_response()
}

/// Headers every answer carries: no inline script runs, nothing is framed,
/// no referrer leaves the site (within it, a form's `Origin` is its own,
/// which [`same_origin`] checks), and nothing is cached.
async fn secure_headers(mut response: axum::response::Response) -> axum::response::Response {
    let headers = response.headers_mut();
    for (name, value) in [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; \
             img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'",
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "same-origin"),
        (header::CACHE_CONTROL, "no-store"),
        (header::X_FRAME_OPTIONS, "DENY"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// How often the live inbox looks when the store cannot tell of writes.
const LIVE_SLICE: Duration = Duration::from_secs(15);
