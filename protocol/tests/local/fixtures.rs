//! Every wire type reads its JSON fixture and writes it back unchanged, so
//! field names and tags cannot change by accident.

use computer_protocol::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::path::Path;

fn round_trip<T: DeserializeOwned + Serialize>(name: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("fixture exists");
    let original: serde_json::Value = serde_json::from_str(&text).expect("fixture is JSON");
    let typed: T = serde_json::from_value(original.clone())
        .unwrap_or_else(|e| panic!("{name} does not parse: {e}"));
    let written = serde_json::to_value(&typed).expect("serialises");
    assert_eq!(written, original, "{name} changed on the way through");
}

#[test]
fn fixtures_round_trip() {
    round_trip::<ActRequest>("act_request.json");
    round_trip::<ActResponse>("act_response.json");
    round_trip::<Observation>("observation.json");
    round_trip::<CreateSessionRequest>("create_session_request.json");
    round_trip::<ShellRequest>("shell_request.json");
    round_trip::<ShellResult>("shell_result.json");
    round_trip::<ReadFileResponse>("read_file_text.json");
    round_trip::<ReadFileResponse>("read_file_image.json");
    round_trip::<ListFilesResponse>("list_files_response.json");
    round_trip::<WireError>("wire_error.json");
    round_trip::<SessionsResponse>("sessions_response.json");
    round_trip::<ViewerStatus>("viewer_status.json");
    round_trip::<FocusRequest>("focus_request.json");
    round_trip::<UploadRequest>("upload_request.json");
    round_trip::<UploadTarget>("upload_target.json");
    round_trip::<TransferSource>("transfer_source.json");
    round_trip::<TransferSummary>("transfer_summary.json");
    round_trip::<ObserveRequest>("observe_request.json");
    round_trip::<ObserveRequest>("observe_request_text.json");
    round_trip::<TextView>("text_view.json");
    round_trip::<OpenPathRequest>("open_path_request.json");
    round_trip::<LaunchAppRequest>("launch_app_request.json");
    round_trip::<OpenedResponse>("opened_response.json");
    round_trip::<LauncherRequest>("launcher_request.json");
    round_trip::<DevToolsStartRequest>("devtools_start_request.json");
    round_trip::<DevToolsStarted>("devtools_started.json");
    round_trip::<DevToolsStopped>("devtools_stopped.json");
}

#[test]
fn transfer_requests_refuse_unknown_fields() {
    let e = serde_json::from_str::<UploadRequest>(
        r#"{"path": "x", "name": "a", "kind": "file", "force": true}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("unknown field `force`"), "{e}");
    let e = serde_json::from_str::<SourceRequest>(r#"{"path": "x", "recursive": true}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `recursive`"), "{e}");
}

#[test]
fn title_limits() {
    let req = |title: &str| CreateSessionRequest {
        title: title.into(),
        owner: OwnerId("o".into()),
        settings: SessionSettings::default(),
        resume: None,
    };
    assert!(req("ok").validate().is_ok());
    assert!(req(&"é".repeat(80)).validate().is_ok());
    assert!(req(&"é".repeat(81))
        .validate()
        .unwrap_err()
        .0
        .contains("81 characters"));
    assert!(req("  ")
        .validate()
        .unwrap_err()
        .0
        .contains("`title` is empty"));
}

#[test]
fn focus_request_refuses_unknown_fields() {
    let e = serde_json::from_str::<FocusRequest>(r#"{"screen": 1, "session": "x"}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `session`"), "{e}");
}
