//! The PostgreSQL store against a real server this test binary starts:
//! the storage conformance suite, and what a user sees when something is
//! wrong.

use std::{sync::Arc, time::Duration};

use orcho_core::{
    RunId,
    storage::{Item, NewRun, Storage, conformance},
};
use orcho_pg::{
    Origin, PgStorage, SCHEMA_VERSION,
    testing::{PASSWORD, Server},
};

fn run(name: &str) -> RunId {
    name.parse().expect("a run id")
}

#[test]
fn the_postgres_store_passes_the_conformance_suite() {
    let Some(server) = Server::shared() else {
        return;
    };
    conformance::check(&|| {
        let url = server.new_database();
        Arc::new(
            PgStorage::open(&url)
                .expect("a URL")
                .for_origin(Origin::new("here", "/checkout")),
        ) as Arc<dyn Storage>
    });
}

#[test]
fn two_checkouts_on_one_database_list_only_their_own_runs() {
    let Some(server) = Server::shared() else {
        return;
    };
    let url = server.new_database();
    let a = PgStorage::open(&url)
        .unwrap()
        .for_origin(Origin::new("m1", "/a"));
    let b = PgStorage::open(&url)
        .unwrap()
        .for_origin(Origin::new("m2", "/a"));
    let (ra, rb) = (
        run("20261126T100000000Z-aaaaaaaaaaaaaaaa"),
        run("20261126T100001000Z-bbbbbbbbbbbbbbbb"),
    );
    drop(a.create_run(&ra, NewRun::new(b"{}", b"{}")).unwrap());
    drop(b.create_run(&rb, NewRun::new(b"{}", b"{}")).unwrap());
    assert_eq!(a.runs().unwrap().runs, std::slice::from_ref(&ra));
    assert_eq!(b.runs().unwrap().runs, std::slice::from_ref(&rb));
    assert_eq!(a.team().runs().unwrap().runs, [ra.clone(), rb.clone()]);
    // Another checkout's run is still reachable by its id, and says where
    // it is driven from.
    assert!(a.has_run(&rb).unwrap());
    let there = a.origin(&rb).unwrap().expect("an origin");
    assert_eq!(
        (there.machine.as_str(), there.checkout.as_str(), there.here),
        ("m2", "/a", false)
    );
    assert!(a.origin(&ra).unwrap().expect("an origin").here);
    assert!(a.origin(&run("nope")).unwrap().is_none());
    // Asked at once, each as asked alone; an unknown run left out.
    let origins = a.origins(&[ra.clone(), rb.clone(), run("nope")]).unwrap();
    assert_eq!(
        origins.keys().collect::<Vec<_>>(),
        [&ra, &rb],
        "{origins:?}"
    );
    assert_eq!(origins[&ra], a.origin(&ra).unwrap().unwrap());
    assert_eq!(origins[&rb], there);
    assert!(a.origins(&[]).unwrap().is_empty());
    assert_eq!(
        a.get(&rb, Item::Snapshot).unwrap().as_deref(),
        Some(&b"{}"[..])
    );
}

#[test]
fn the_password_is_never_shown() {
    let Some(server) = Server::shared() else {
        return;
    };
    let url = server.new_database();
    let storage = PgStorage::open(&url).unwrap();
    assert!(
        !storage.location().contains(PASSWORD),
        "{}",
        storage.location()
    );
    assert!(!format!("{storage:?}").contains(PASSWORD));
    let id = run("r1");
    assert!(
        !storage
            .locate(&id, Item::Snapshot)
            .as_str()
            .contains(PASSWORD)
    );
    let wrong = url.replace(PASSWORD, "not-the-password");
    let e = PgStorage::open(&wrong).unwrap().runs().unwrap_err();
    let text = orcho_core::error_chain(&e);
    assert!(text.contains("the password was refused"), "{text}");
    assert!(!text.contains("not-the-password"), "{text}");
}

#[test]
fn a_refused_connection_says_so_in_one_line() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let storage = PgStorage::open(&format!(
        "postgres://u:pw@127.0.0.1:{port}/db?connect_timeout=5"
    ))
    .unwrap();
    let e = storage.runs().unwrap_err();
    let text = orcho_core::error_chain(&e);
    assert!(text.contains("connection refused"), "{text}");
    assert!(!text.contains(":pw@"), "{text}");
    assert!(!text.contains('\n'), "{text}");
}

#[test]
fn a_missing_database_names_what_to_do() {
    let Some(server) = Server::shared() else {
        return;
    };
    let storage = PgStorage::open(&server.url("no_such_database")).unwrap();
    let text = orcho_core::error_chain(&storage.runs().unwrap_err());
    assert!(
        text.contains("does not exist") && text.contains("create it"),
        "{text}"
    );
}

#[test]
fn a_newer_schema_is_refused_and_left_as_it_is() {
    let Some(server) = Server::shared() else {
        return;
    };
    let url = server.new_database();
    let storage = PgStorage::open(&url).unwrap();
    assert_eq!(
        storage.migrate().unwrap(),
        0,
        "a new database has no schema"
    );
    assert_eq!(
        storage.migrate().unwrap(),
        SCHEMA_VERSION,
        "migrating twice changes nothing"
    );
    let db = url
        .rsplit('/')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    server.psql(
        &db,
        &format!("UPDATE orcho_schema SET version = {}", SCHEMA_VERSION + 1),
    );
    let fresh = PgStorage::open(&url).unwrap();
    let text = orcho_core::error_chain(&fresh.runs().unwrap_err());
    assert!(text.contains("newer than this orcho knows"), "{text}");
    assert_eq!(
        server.psql(&db, "SELECT version FROM orcho_schema"),
        (SCHEMA_VERSION + 1).to_string()
    );
}

#[test]
fn of_two_hosts_migrating_a_new_database_at_once_both_succeed() {
    let Some(server) = Server::shared() else {
        return;
    };
    let url = server.new_database();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || PgStorage::open(&url).unwrap().runs().map(|l| l.runs.len()))
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().unwrap(), 0);
    }
}

#[test]
fn it_works_when_called_from_async_code() {
    let Some(server) = Server::shared() else {
        return;
    };
    let url = server.new_database();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let storage = PgStorage::open(&url).unwrap();
        let lease = storage
            .create_run(&run("r1"), NewRun::new(b"{}", b"{}"))
            .unwrap();
        assert!(storage.is_leased(&run("r1")));
        drop(lease);
        assert!(storage.lease(&run("r1"), Duration::ZERO).unwrap().is_some());
        drop(storage);
    });
}

#[test]
fn a_database_restart_gives_a_clear_error_and_the_next_call_goes_on() {
    if Server::shared().is_none() {
        return;
    }
    // A server of its own: the shared one stays up for the other tests.
    let server = Server::start().expect("a second server");
    let url = server.new_database();
    let storage = PgStorage::open(&url)
        .unwrap()
        .for_origin(Origin::new("here", "/c"));
    let r = run("r1");
    let mut lease = storage
        .create_run(&r, NewRun::new(b"{\"seq\":1}", b"{}"))
        .unwrap();
    server.stop().unwrap();
    let text = orcho_core::error_chain(&storage.runs().unwrap_err());
    assert!(!text.contains(PASSWORD), "{text}");
    assert!(!text.contains('\n'), "one line: {text}");
    // The lease died with its connection: the driver can append nothing
    // more, and says so.
    assert!(lease.append(b"{\"seq\":2}").is_err());
    server.start_again().unwrap();
    assert_eq!(storage.runs().unwrap().runs, std::slice::from_ref(&r));
    drop(lease);
    let mut again = storage
        .lease(&r, Duration::from_secs(5))
        .unwrap()
        .expect("the lease is free again");
    again.append(b"{\"seq\":2}").unwrap();
    assert_eq!(
        storage.read_log(&r, orcho_core::storage::Log::Run).unwrap(),
        b"{\"seq\":1}\n{\"seq\":2}\n"
    );
    server.stop().unwrap();
}

#[test]
fn the_points_view_reads_as_the_store_does() {
    use orcho_core::storage::{Log, PointKind, Set};
    let Some(server) = Server::shared() else {
        return;
    };
    let url = server.new_database();
    let mine = PgStorage::open(&url)
        .unwrap()
        .for_origin(Origin::new("m1", "/a"));
    let theirs = PgStorage::open(&url)
        .unwrap()
        .for_origin(Origin::new("m2", "/b"));
    let (with, without, other) = (run("r-with"), run("r-without"), run("r-other"));
    for (storage, r) in [(&mine, &with), (&mine, &without), (&theirs, &other)] {
        let mut lease = storage
            .create_run(r, NewRun::new(b"{\"seq\":1}", b"{}"))
            .unwrap();
        lease.append(b"{\"seq\":2}").unwrap();
    }
    let point: orcho_core::HandoffId = "0001-review".parse().unwrap();
    for (storage, r) in [(&mine, &with), (&theirs, &other)] {
        storage
            .create(r, Item::Question(PointKind::Handoff, &point), b"question")
            .unwrap();
        storage
            .create(r, Item::Decision(&point), b"decision")
            .unwrap();
        storage
            .append_log(r, Log::Handoffs, b"{\"opened\":1}")
            .unwrap();
    }
    mine.put(&with, Item::Evidence, b"evidence").unwrap();
    let view = mine.points_view().unwrap().expect("a view");
    // This checkout's runs with a decision point; the team's for a team view.
    assert_eq!(view.runs().unwrap().runs, std::slice::from_ref(&with));
    let team = mine.team().points_view().unwrap().expect("a view");
    assert_eq!(team.runs().unwrap().runs, [other.clone(), with.clone()]);
    assert!(!team.origin(&other).unwrap().expect("an origin").here);
    for item in [
        Item::Question(PointKind::Handoff, &point),
        Item::Decision(&point),
        Item::Snapshot,
    ] {
        assert_eq!(
            view.get(&with, item).unwrap(),
            mine.get(&with, item).unwrap()
        );
    }
    for log in [Log::Run, Log::Handoffs] {
        assert_eq!(
            view.read_log(&with, log).unwrap(),
            mine.read_log(&with, log).unwrap()
        );
    }
    assert_eq!(
        view.list(&with, Set::Questions(PointKind::Handoff))
            .unwrap(),
        mine.list(&with, Set::Questions(PointKind::Handoff))
            .unwrap()
    );
    // What no scan reads is left out, and the view is read-only.
    assert_eq!(view.get(&with, Item::Evidence).unwrap(), None);
    assert!(view.put(&with, Item::Evidence, b"x").is_err());
}

#[test]
fn tls_asked_of_a_server_without_it_is_refused_in_one_line() {
    let Some(server) = Server::shared() else {
        return;
    };
    let url = server
        .new_database()
        .replace("sslmode=disable", "sslmode=require");
    let text = orcho_core::error_chain(&PgStorage::open(&url).unwrap().runs().unwrap_err());
    assert!(text.contains("cannot connect to the store"), "{text}");
    assert!(!text.contains(PASSWORD) && !text.contains('\n'), "{text}");
}

/// A server that takes connections and never says a word.
fn silent_server() -> (std::net::TcpListener, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("its address").port();
    (listener, port)
}

#[test]
fn a_server_that_accepts_and_never_answers_ends_the_command_with_an_error() {
    let (listener, port) = silent_server();
    // Accepted and held open, never answered.
    let held = std::thread::spawn(move || {
        let mut kept = Vec::new();
        for stream in listener.incoming().take(4).flatten() {
            kept.push(stream);
        }
        std::thread::sleep(Duration::from_secs(30));
        drop(kept);
    });
    let url = format!("postgres://u@127.0.0.1:{port}/db?sslmode=disable&connect_timeout=1");
    let storage = PgStorage::open(&url).expect("a URL");
    let started = std::time::Instant::now();
    let error = storage.runs().expect_err("nobody answers");
    let waited = started.elapsed();
    let said = orcho_core::error_chain(&error);
    assert!(
        said.contains("no answer within 1s") && said.contains("connect_timeout=SECONDS"),
        "{said}"
    );
    assert!(!said.contains("refused"), "{said}");
    // Given up at its timeout, not after the operating system's.
    assert!(waited < Duration::from_secs(10), "{waited:?}");
    drop(held);
}

#[test]
fn a_server_that_stops_answering_mid_session_ends_the_command_with_an_error() {
    use std::{
        io::{Read, Write},
        net::{TcpListener, TcpStream},
        sync::atomic::{AtomicBool, Ordering},
    };
    let Some(server) = Server::shared() else {
        return;
    };
    let url = server.new_database();
    // A proxy in front of the server that stops passing anything on when
    // told: the connection stays open, the answers never come.
    let frozen = Arc::new(AtomicBool::new(false));
    let proxy = TcpListener::bind("127.0.0.1:0").expect("a port");
    let proxy_port = proxy.local_addr().expect("its address").port();
    let upstream = server.port();
    let freeze = Arc::clone(&frozen);
    std::thread::spawn(move || {
        for client in proxy.incoming().flatten() {
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                continue;
            };
            for (mut from, mut to) in [
                (
                    client.try_clone().expect("a clone"),
                    server.try_clone().expect("a clone"),
                ),
                (server, client),
            ] {
                let freeze = Arc::clone(&freeze);
                std::thread::spawn(move || {
                    let mut buf = [0u8; 8192];
                    while let Ok(n) = from.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        while freeze.load(Ordering::SeqCst) {
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        if to.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                });
            }
        }
    });
    let proxied = url.replace(
        &format!("127.0.0.1:{upstream}/"),
        &format!("127.0.0.1:{proxy_port}/"),
    ) + "&connect_timeout=1";
    let storage = PgStorage::open(&proxied)
        .expect("a URL")
        .for_origin(Origin::new("here", "/checkout"));
    storage.runs().expect("answered before the freeze");
    frozen.store(true, Ordering::SeqCst);
    let started = std::time::Instant::now();
    let error = storage.runs().expect_err("no answer");
    let waited = started.elapsed();
    let said = orcho_core::error_chain(&error);
    assert!(said.contains("did not answer within 11s"), "{said}");
    assert!(!said.contains(PASSWORD), "{said}");
    assert!(waited < Duration::from_secs(25), "{waited:?}");
    frozen.store(false, Ordering::SeqCst);
}

#[test]
fn a_missing_password_is_said_as_missing_not_refused() {
    let Some(server) = Server::shared() else {
        return;
    };
    let url = server.new_database();
    let without = url.replace(&format!(":{PASSWORD}@"), "@");
    assert!(!without.contains(PASSWORD), "{without}");
    // Neither the URL nor the environment gives one.
    let e = PgStorage::open(&without).unwrap().runs().unwrap_err();
    let text = orcho_core::error_chain(&e);
    assert!(
        text.contains(
            "the server asks for a password, and neither the URL nor PGPASSWORD gives one"
        ),
        "{text}"
    );
    assert!(!text.contains("refused"), "{text}");
}
