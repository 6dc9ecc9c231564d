//! Profile YAML: loading, validation and resolution never panic; a profile
//! that loads writes itself back as YAML that loads to the same profile.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orcho_gates::GateRegistry;
use orcho_profile::Profile;

fuzz_target!(|data: &[u8]| {
    let Ok(profile) = Profile::from_yaml_slice(data) else {
        return;
    };
    let _ = profile.resolve(&GateRegistry::with_builtins());
    let yaml = profile.to_yaml();
    let again = Profile::from_yaml_str(&yaml).expect("a loaded profile's YAML loads");
    assert_eq!(again.to_yaml(), yaml, "the YAML of a loaded profile is stable");
});
