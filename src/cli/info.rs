//! `pipekrylov info`: compiled-in backends, the devices they see, why one is unavailable, and
//! (with `--probe`) the measured copy bandwidth and launch latencies.

use crate::backend::{available_backends_with, BackendChoice, BackendConfig, BackendInfo};
use crate::bench::probe::probe;
use crate::error::Result;

/// The info text, for the devices and tuning of `config` (the environment's and `--tune`'s).
pub fn run(with_probe: bool, json: bool, config: &BackendConfig) -> Result<String> {
    let status = available_backends_with(config);
    let (auto, notes) = BackendChoice::Auto.create_with(config)?;
    let mut probes = Vec::new();
    if with_probe {
        for st in status.iter().filter(|s| s.available) {
            let choice: BackendChoice = st.name.parse()?;
            let (b, _) = choice.create_with(config)?;
            let bytes = if st.name == "host" {
                64 << 20
            } else {
                512 << 20
            };
            let p = probe(&b, bytes)?;
            probes.push((st.name, b.device_name(), p));
        }
    }
    if json {
        let v = serde_json::json!({
            "backends": status,
            "auto": { "backend": auto.name(), "device": auto.device_name(), "notes": notes },
            "probes": probes.iter().map(|(n, d, p)| serde_json::json!({"backend": n, "device": d, "copy_gb_per_s": p.copy_bandwidth / 1e9, "launch_us": p.launch_seconds * 1e6, "roundtrip_us": p.roundtrip_seconds * 1e6})).collect::<Vec<_>>(),
        });
        return Ok(v.to_string());
    }
    let mut s = String::new();
    for st in &status {
        s += &format!(
            "{:<7} compiled: {:<3} available: {:<3} {}\n",
            st.name,
            if st.compiled { "yes" } else { "no" },
            if st.available { "yes" } else { "no" },
            st.note
        );
        for d in &st.devices {
            s += &format!("        device: {d}\n");
        }
    }
    s += &format!("auto picks: {} ({})\n", auto.name(), auto.device_name());
    for n in &notes {
        s += &format!("  {n}\n");
    }
    for (name, dev, p) in &probes {
        s += &format!(
            "probe {name} ({dev}): copy {:.1} GB/s, launch {:.2} us, kernel + readback {:.2} us\n",
            p.copy_bandwidth / 1e9,
            p.launch_seconds * 1e6,
            p.roundtrip_seconds * 1e6
        );
    }
    Ok(s)
}
