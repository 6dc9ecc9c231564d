//! Who is asking: a bearer token, or a session cookie a login link made,
//! with the CSRF token of its forms.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use axum::{
    extract::{FromRequestParts, Query, State},
    http::{HeaderMap, StatusCode, header, request::Parts},
    response::{IntoResponse, Redirect, Response},
};
use serde::Deserialize;

use super::{Web, tokens::Access};

/// The session cookie's name.
const COOKIE: &str = "orcho_session";

/// A logged-in browser.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) name: String,
    pub(crate) access: Access,
    pub(crate) csrf: String,
}

/// The sessions of this server, in memory: a restart logs everyone out.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sessions(Arc<Mutex<HashMap<String, Session>>>);

fn random_hex() -> String {
    let mut bytes = [0u8; 32];
    // Without randomness there is no session: an empty id matches none.
    if getrandom::fill(&mut bytes).is_err() {
        return String::new();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Sessions {
    fn open(&self, name: String, access: Access) -> Option<String> {
        let id = random_hex();
        let csrf = random_hex();
        if id.is_empty() || csrf.is_empty() {
            return None;
        }
        self.0
            .lock()
            .ok()?
            .insert(id.clone(), Session { name, access, csrf });
        Some(id)
    }

    fn get(&self, id: &str) -> Option<Session> {
        self.0.lock().ok()?.get(id).cloned()
    }

    fn close(&self, id: &str) {
        if let Ok(mut sessions) = self.0.lock() {
            sessions.remove(id);
        }
    }
}

/// Who asks, and how they proved it.
#[derive(Debug, Clone)]
pub(crate) struct Caller {
    pub(crate) name: String,
    pub(crate) access: Access,
    /// The session's CSRF token, for a caller with a cookie; `None` for a
    /// bearer token (no cookie, nothing a page can forge).
    pub(crate) csrf: Option<String>,
}

impl Caller {
    /// Refuses a read-only caller.
    pub(crate) fn may_decide(&self) -> Result<(), Refused> {
        match self.access {
            Access::Decide => Ok(()),
            Access::ReadOnly => Err(Refused::Forbidden(format!(
                "the token `{}` may look but not decide",
                self.name
            ))),
        }
    }

    /// Refuses a form whose CSRF token is not the session's.
    pub(crate) fn check_csrf(&self, given: Option<&str>) -> Result<(), Refused> {
        match &self.csrf {
            None => Ok(()),
            Some(csrf) if given.is_some_and(|g| constant_eq(g, csrf)) => Ok(()),
            Some(_) => Err(Refused::Forbidden(
                "the form's CSRF token is missing or stale: reload the page".to_owned(),
            )),
        }
    }
}

fn constant_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Why a request is refused before it is handled.
#[derive(Debug)]
pub(crate) enum Refused {
    /// No token, or one that is not known: 401.
    Unauthorized,
    /// Known, and not allowed this: 403.
    Forbidden(String),
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        match self {
            Self::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                "log in: `orcho serve token add NAME` prints a login link; the API takes \
                 `Authorization: Bearer TOKEN`\n",
            )
                .into_response(),
            Self::Forbidden(why) => (StatusCode::FORBIDDEN, format!("{why}\n")).into_response(),
        }
    }
}

fn cookie_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == COOKIE).then(|| value.to_owned())
        })
}

impl FromRequestParts<Web> for Caller {
    type Rejection = Refused;

    async fn from_request_parts(parts: &mut Parts, web: &Web) -> Result<Self, Self::Rejection> {
        if let Some(bearer) = parts
            .headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
        {
            let token = web
                .tokens
                .check(bearer)
                .ok()
                .flatten()
                .ok_or(Refused::Unauthorized)?;
            return Ok(Self {
                name: token.name,
                access: token.access,
                csrf: None,
            });
        }
        let session = cookie_of(&parts.headers)
            .and_then(|id| web.sessions.get(&id))
            .ok_or(Refused::Unauthorized)?;
        Ok(Self {
            name: session.name,
            access: session.access,
            csrf: Some(session.csrf),
        })
    }
}

#[derive(Debug, Deserialize)]
pub(crate) struct Login {
    token: String,
}

/// `GET /login?token=…`: the token, exchanged for a session cookie; the
/// browser goes on to the inbox (and the token leaves its address bar).
pub(crate) async fn login(
    State(web): State<Web>,
    headers: HeaderMap,
    Query(login): Query<Login>,
) -> Response {
    let Ok(Some(token)) = web.tokens.check(&login.token) else {
        return Refused::Unauthorized.into_response();
    };
    let Some(id) = web.sessions.open(token.name, token.access) else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "no randomness for a session\n",
        )
            .into_response();
    };
    // Behind a proxy that speaks TLS, the cookie is sent over TLS only.
    let secure = headers
        .get("x-forwarded-proto")
        .is_some_and(|v| v.as_bytes() == b"https");
    let cookie = format!(
        "{COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/{}",
        if secure { "; Secure" } else { "" }
    );
    ([(header::SET_COOKIE, cookie)], Redirect::to("/")).into_response()
}

/// `POST /logout`: ends the session.
pub(crate) async fn logout(State(web): State<Web>, headers: HeaderMap) -> Response {
    if let Some(id) = cookie_of(&headers) {
        web.sessions.close(&id);
    }
    let cookie = format!("{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
    ([(header::SET_COOKIE, cookie)], Redirect::to("/")).into_response()
}
