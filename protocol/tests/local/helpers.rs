//! The shared test helpers' own checks (`test-support`): waiting with a
//! deadline, requiring a program, raw tar entries and trees of files. They
//! run here, in the first and smallest fast binary of the workspace, which
//! uses the tarball and tree helpers itself, so that the helpers need no
//! test binary of their own.

mod wait {
    use std::cell::Cell;
    use std::time::Duration;
    use test_support::wait::*;

    #[tokio::test(start_paused = true)]
    async fn wait_until_returns_the_first_value_and_checks_every_50_ms() {
        let started = tokio::time::Instant::now();
        let checks = Cell::new(0);
        let value = wait_until("the third check", Duration::from_secs(1), || {
            checks.set(checks.get() + 1);
            let n = checks.get();
            async move { (n == 3).then_some(n) }
        })
        .await;
        assert_eq!(value, 3);
        assert_eq!(started.elapsed(), Duration::from_millis(100));
    }

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "timed out after 1s waiting for nothing")]
    async fn wait_until_panics_at_its_deadline_naming_what_it_waited_for() {
        wait_until("nothing", Duration::from_secs(1), || async { None::<()> }).await;
    }

    #[tokio::test(start_paused = true)]
    async fn wait_until_holds_checks_at_its_own_pace() {
        let started = tokio::time::Instant::now();
        let checks = Cell::new(0);
        wait_until_holds(
            "the fifth check",
            Duration::from_secs(10),
            Duration::from_millis(100),
            || {
                checks.set(checks.get() + 1);
                checks.get() == 5
            },
        )
        .await;
        assert_eq!(started.elapsed(), Duration::from_millis(400));
    }

    #[tokio::test(start_paused = true)]
    #[should_panic(expected = "timed out after 2s waiting for a condition that never holds")]
    async fn wait_until_holds_panics_at_its_deadline() {
        wait_until_holds(
            "a condition that never holds",
            Duration::from_secs(2),
            Duration::from_millis(100),
            || false,
        )
        .await;
    }

    #[test]
    fn wait_until_blocking_returns_the_first_value() {
        let mut checks = 0;
        let value = wait_until_blocking("the second check", Duration::from_secs(5), || {
            checks += 1;
            (checks == 2).then_some("found")
        });
        assert_eq!((value, checks), ("found", 2));
    }

    #[test]
    #[should_panic(expected = "timed out after 20ms waiting for a file")]
    fn wait_until_blocking_panics_at_its_deadline() {
        wait_until_blocking("a file", Duration::from_millis(20), || None::<()>);
    }
}

mod programs {
    use test_support::programs::*;

    #[test]
    fn a_program_on_path_is_found_where_it_is() {
        let sh = require_program("sh", "apt-get install dash");
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{}", sh.display());
        require_programs(&[("sh", "dash")]);
    }

    #[test]
    #[should_panic(
        expected = "`no-such-program-3f1c` is not installed; run `apt-get install no-such-package` (or `bash scripts/install-test-deps.sh`)"
    )]
    fn a_missing_program_fails_with_its_install_command() {
        require_programs(&[("no-such-program-3f1c", "no-such-package")]);
    }
}

mod tarball {
    use test_support::tarball::*;

    #[test]
    fn a_raw_entry_is_a_whole_number_of_blocks_that_tar_reads_back() {
        let mut bytes = Vec::new();
        raw_entry(
            &mut bytes,
            "../escape",
            tar::EntryType::Regular,
            "",
            b"data",
        );
        assert_eq!(bytes.len(), 1024, "a header block and a data block");
        bytes.resize(bytes.len() + 1024, 0);
        let mut archive = tar::Archive::new(bytes.as_slice());
        let entry = archive.entries().unwrap().next().unwrap().unwrap();
        assert_eq!(entry.path_bytes().as_ref(), b"../escape");
        assert_eq!(entry.header().mode().unwrap(), 0o644);
        assert_eq!(entry.size(), 4);
    }
}

mod tree {
    use computer_protocol::archive::TEMP_PREFIX;
    use test_support::tree::*;

    #[test]
    fn a_built_tree_is_described_entry_by_entry() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        build(
            &root,
            &[
                Item::Dir("src"),
                Item::File("src/a.txt", b"hello"),
                Item::Mode("src/a.txt", 0o600),
                Item::Link("link", "src/a.txt"),
                Item::Fifo("pipe"),
            ],
        );
        let described = manifest(&root);
        assert_eq!(described["src"], "dir 755");
        assert_eq!(
            described["src/a.txt"],
            format!("file 600 {}", checksum(b"hello"))
        );
        assert_eq!(described["link"], "link src/a.txt");
        assert_eq!(described["pipe"], "other");
        assert_eq!(described.len(), 4);
    }

    #[test]
    fn temporary_files_are_found_at_any_depth() {
        let dir = tempfile::tempdir().unwrap();
        let temp = format!("src/deep/{TEMP_PREFIX}upload");
        build(dir.path(), &[Item::Dir("src/deep"), Item::File(&temp, b"")]);
        assert_eq!(temp_files(dir.path()), vec![dir.path().join(&temp)]);
        assert!(temp_files(&dir.path().join("missing")).is_empty());
    }
}
