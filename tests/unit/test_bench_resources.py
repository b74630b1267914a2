"""The benchmark's reading of a round (bench/resources.py, bench/db_cap.py): whose CPU a PostgreSQL process spends,
the kinds of process, which resource ran out, and the cgroup files it reads and writes. A wrong verdict would send
the performance work after the wrong resource."""

from __future__ import annotations

import pytest

from bench.db_cap import Throttling, pids, postmaster_pid, quota_us, throttling
from bench.resources import by_kind, postgres_database, postgres_share, verdict


@pytest.mark.parametrize(("title", "database"), [
    ("postgres: 15/main: postgres svc_bench_ab12 127.0.0.1(5432) idle", "svc_bench_ab12"),
    ("postgres: postgres svc_bench_ab12 127.0.0.1(5432) INSERT", "svc_bench_ab12"),
    ("postgres: 15/main: postgres svc_test_1 [local] idle in transaction", "svc_test_1"),
    ("postgres: 15/main: autovacuum worker svc_bench_ab12", "svc_bench_ab12"),
    ("postgres: 15/main: checkpointer ", None),
    ("postgres: 15/main: walwriter ", None),
    ("postgres: background writer ", None),
    ("/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main -c config_file=x", None),
])
def test_a_postgres_process_title_names_the_database_it_serves(title, database):
    assert postgres_database(title) == database


def test_other_databases_backends_are_not_the_loads_cost_but_the_servers_own_processes_are():
    assert postgres_share("postgres: 15/main: postgres svc_bench_x 127.0.0.1(1) idle", "svc_bench_x") == "postgres"
    assert postgres_share("postgres: 15/main: walwriter ", "svc_bench_x") == "postgres"
    assert postgres_share("postgres: 15/main: postgres svc_test_y 127.0.0.1(1) idle", "svc_bench_x") == \
        "postgres_others"


def test_processes_are_summed_by_kind_with_the_app_apart_from_the_servers():
    kinds = by_kind({"web1": 1.0, "web2": 2.0, "actors1": 0.5, "postgres": 0.25, "redis-server": 0.125, "wrk": 0.1})
    assert kinds == {"web": 3.0, "actors": 0.5, "PostgreSQL": 0.25, "Redis": 0.125, "wrk": 0.1, "app": 3.5}
    assert by_kind({"peer1": 1.0, "peer2": 1.0, "postgres": 2.0})["app"] == 2.0


def test_postgresql_using_its_quota_is_what_ran_out_under_a_cap():
    cpu = {"peer1": 3.0, "peer2": 3.0, "postgres": 2.4, "redis-server": 0.2}  # 10 s: PostgreSQL 0.24 cores
    found = verdict(cpu, 10, cores=2, busy_cores=1.0, db_cap=0.25, throttled_share=0.8)
    assert found.resource == "PostgreSQL quota"
    assert "0.24 of 0.25 cores" in found.text and "80%" in found.text


def test_throttling_alone_says_postgresql_is_at_its_quota():
    found = verdict({"web1": 1.0, "postgres": 1.0}, 10, cores=2, busy_cores=0.5, db_cap=0.25, throttled_share=0.6)
    assert found.resource == "PostgreSQL quota"


def test_a_capped_postgresql_with_room_left_blames_the_shared_cores_when_they_are_full():
    cpu = {"web1": 6.0, "web2": 6.0, "actors1": 4.0, "postgres": 1.0, "redis-server": 1.0}
    found = verdict(cpu, 10, cores=2, busy_cores=1.95, db_cap=0.25, throttled_share=0.05)
    assert found.resource == "shared cores"
    assert "1.95 of 2 busy" in found.text and "other work 0.15" in found.text


def test_a_single_process_at_a_whole_core_is_named_when_the_machine_has_room():
    found = verdict({"web1": 2.0, "actors1": 9.5, "postgres": 1.0}, 10, cores=4, busy_cores=1.3)
    assert found == ("one process", "one process at a whole core: actors1 0.95")


def test_below_saturation_nothing_ran_out():
    found = verdict({"web1": 2.0, "actors1": 1.0, "postgres": 1.0}, 10, cores=2, busy_cores=0.5)
    assert found.resource == "none"


def test_the_cgroup_files_are_read_as_the_kernel_writes_them():
    assert quota_us(0.25) == 25_000 and quota_us(1.5) == 150_000 and quota_us(0.001) == 1000
    with pytest.raises(ValueError):
        quota_us(0)
    assert postmaster_pid("2211\n/var/lib/postgresql/15/main\n1764031234\n5432\n") == 2211
    with pytest.raises(ValueError):
        postmaster_pid("\n")
    assert pids("12\n345\n") == [12, 345] and pids("") == []
    stat = throttling("nr_periods 200\nnr_throttled 150\nthrottled_time 3000000000\n")
    assert stat == Throttling(200, 150, 3.0)
    assert stat.since(Throttling(100, 50, 1.0)).share == 1.0
    assert Throttling(0, 0, 0.0).share == 0.0
