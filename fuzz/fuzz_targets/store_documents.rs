//! The documents a store keeps — journals, snapshots, handoffs, decisions,
//! waivers, touchpoints, the delivery gate and its patch — each replaced by
//! anything: listing, status, the inbox, handoffs, touchpoints, the gate
//! and the evidence never panic; an unreadable run is listed as such.
#![no_main]

use std::sync::{Mutex, OnceLock};

use camino::{Utf8Path, Utf8PathBuf};
use libfuzzer_sys::fuzz_target;

struct Fixture {
    _tmp: tempfile::TempDir,
    root: Utf8PathBuf,
    files: Vec<(Utf8PathBuf, Vec<u8>)>,
}

fn copy(from: &Utf8Path, to: &Utf8Path, files: &mut Vec<(Utf8PathBuf, Vec<u8>)>) {
    std::fs::create_dir_all(to).expect("a directory");
    for entry in from.read_dir_utf8().expect("the fixture") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a type").is_dir() {
            copy(entry.path(), &target, files);
        } else {
            let bytes = std::fs::read(entry.path()).expect("a file");
            orcho_core::fs::write_atomic(&target, &bytes).expect("a copy");
            files.push((target, bytes));
        }
    }
}

fn fixture() -> &'static Mutex<Fixture> {
    static FIXTURE: OnceLock<Mutex<Fixture>> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("a temporary directory");
        let root = Utf8PathBuf::try_from(tmp.path().to_owned()).expect("UTF-8").join("store");
        let mut files = Vec::new();
        let from = Utf8Path::new(env!("CARGO_MANIFEST_DIR")).join("../orcho/tests/fixtures/store-paused/runs");
        copy(&from, &root.join("runs"), &mut files);
        files.sort();
        Mutex::new(Fixture { _tmp: tmp, root, files })
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let f = fixture().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let (path, original) = &f.files[usize::from(selector) % f.files.len()];
    orcho_core::fs::write_atomic(path, bytes).expect("the replaced document");
    let store = orcho::Store::open(&f.root);
    if let Ok(listed) = store.list() {
        for run in listed.iter().map(orcho::Listed::run) {
            let _ = store.status(run);
            let _ = store.handoffs(run);
            let _ = store.touchpoints(run);
            let _ = store.delivery_gate(run);
            let _ = store.intake_report(run);
            let _ = store.trace(run);
            let _ = store.evidence(run, None);
        }
    }
    let _ = store.inbox();
    orcho_core::fs::write_atomic(path, original).expect("the original back");
});
