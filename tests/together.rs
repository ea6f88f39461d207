//! The features together, against a model: random sequences of writes over one table that uses a
//! sparse index (write-sharded, read merged), a keys-only and an INCLUDE index, single and compound unique values, a time to
//! live on a clock the test moves, versions, managed timestamps and a stream, through puts, updates
//! (counters, plain and under a sequence guard; unique values changed in place, under a version),
//! deletes, rekeys (of tasks, and of members with their unique values, versions and expiries),
//! guarded appends, batch writes, bulk loads at an adaptive rate, transactions, concurrent puts and
//! the claim sweep of unique values, while a migration runs: a process still on version 1 of the
//! task writes the old shape, the plan that creates version 2's index is applied online, and sweeps
//! (plain, or two distributed workers at once, one of them run as Lambda invocations with a
//! deadline each) backfill the index while the new code puts tasks.
//! After every step the library's reads (get, batch gets of one entity and of a collection's
//! entities together, transactional gets, partition and
//! collection queries and counts, pages through sealed cursors handed out as text (across a
//! rotation of their secret), every index,
//! scans, lookups by unique value, hydration, the append pointer, migration coverage) and the raw
//! table are compared with an in-memory model of the documented semantics; at the end the stream is
//! drained, every record must be a user entity's that decodes, and its changes replayed must leave
//! the model's items. Every request goes through a recording proxy, and each must be allowed by the
//! IAM policy generated for the table (`singletable::infra::IamPolicy`). The steps' `Db` has
//! the user's retry policy (two attempts, where the default makes three), and every request a
//! step sends must show in its span (one global `tracing` subscriber) no more attempts than
//! that, the SDK's counted; the long jobs run on a `Db` without one, riding through. A failure
//! shrinks to a short sequence of steps.
//!
//! The same sequences run under two more conditions ([`Conditions`]): with DynamoDB refusing
//! half of the steps' requests (throttling, transaction conflicts, unprocessed batch parts,
//! the stream's read limit), where a write the retries do not get through must say so and
//! apply nothing, and no sweep may end in error; and with a fifth of them losing their
//! response, mostly after the engine applied them, where every
//! write must be applied once, and one whose outcome stays unknown must say so (its items are
//! then read back into the model). The stream is drained under the same conditions: a poll
//! or a commit refused or lost after every resend is polled on, and the replay must still
//! match.
//!
//! A fourth run has no faults but indexes and eventually consistent reads that lag the table
//! by up to 300 ms ([`Lagging`]): each read right after a step must show a version of each item
//! that a recent model held, and every third step the table must match the model exactly.
//!
//! `SINGLETABLE_MODEL_CASES` sets the number of sequences of each run (default 8: about 75 s
//! for the three runs on dynoxide and 40 s on moto, on two cores, varying with the sequences
//! drawn; CI runs both engines).

mod common;
use common::spans::{field, Capture};
use common::Needs;

use aws_sdk_dynamodb::types::AttributeValue;
use proptest::prelude::*;
use proptest_state_machine::{prop_state_machine, ReferenceStateMachine, StateMachineTest};
use serde::{Deserialize, Serialize};
use singletable::infra::{IamPolicy, TableArn};
use singletable::migrate::{Blocker, Note as PlanNote, PlanAction};
use singletable::op::append::Appended;
use singletable::op::query::{Cursor, CursorKey, IndexEntry};
use singletable::{Db, Entity, Error, Item, OptionalExt, Page, RetryPolicy, Table};
use singletable_fault::{Fault, FaultKind, FaultPlan, FaultStats, IndexLag};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[derive(Table)]
#[dynamo(
    name = "together",
    pk = "PK",
    sk = "SK",
    ttl = "expires_at",
    stream = "new_and_old_images",
    gsi1(name = "OpenTasks", pk = "GSI1PK", sk = "GSI1SK"),
    gsi2(
        name = "ByOwner",
        pk = "GSI2PK",
        sk = "GSI2SK",
        projection = "keys_only"
    ),
    gsi3(name = "Titles", pk = "GSI3PK", sk = "GSI3SK", projection = ["title"]),
    gsi4(name = "TeamOwners", pk = "GSI4PK", sk = "GSI4SK"),
    gsi5(name = "Inverted", pk = "SK", sk = "PK")
)]
pub struct Together;

/// The same table before version 2 of the task: without its index (`gsi4`). Each run starts
/// here, and a step applies the plan that creates the index online, while the table is used.
#[derive(Table)]
#[dynamo(
    name = "together",
    pk = "PK",
    sk = "SK",
    ttl = "expires_at",
    stream = "new_and_old_images",
    gsi1(name = "OpenTasks", pk = "GSI1PK", sk = "GSI1SK"),
    gsi2(
        name = "ByOwner",
        pk = "GSI2PK",
        sk = "GSI2SK",
        projection = "keys_only"
    ),
    gsi3(name = "Titles", pk = "GSI3PK", sk = "GSI3SK", projection = ["title"]),
    gsi5(name = "Inverted", pk = "SK", sk = "PK")
)]
pub struct TogetherBefore;

/// A member of a team: versioned, with timestamps, an expiry, a unique email and a unique
/// nickname within the team. On the table's keys inverted (`gsi5`), its own keys serve the
/// index: the members of one id across teams.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Together, pk = "TEAM#{team}", sk = "MEMBER#{id}", unique(team, nick),
         gsi5pk = "MEMBER#{id}", gsi5sk = "TEAM#{team}")]
struct Member {
    team: u8,
    id: u8,
    #[dynamo(unique)]
    email: String,
    nick: String,
    #[dynamo(ttl)]
    expires_at: Option<u64>,
    #[dynamo(version)]
    version: u64,
    #[dynamo(created_at)]
    created_at: u64,
    #[dynamo(updated_at)]
    updated_at: u64,
}

/// A task in the same partition: open ones are on the sparse index (its team's partition
/// written over four keys, read merged: ids 0 to 2 take shards 2, 3 and 3), every one on its
/// owner's keys-only index and, with its title, on its team's INCLUDE index. Version 2 adds the
/// team's tasks by owner (`gsi4`), which the items version 1 wrote lack until a sweep backfills them.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Together, schema_version = 2, pk = "TEAM#{team}", sk = "TASK#{id}",
         gsi1pk = "OPEN#{team}#{shard(id, 4)}", gsi1sk = "TASK#{id}", gsi1_when = Task::is_open(open),
         gsi2pk = "OWNER#{owner}", gsi2sk = "TASK#{team}#{id}",
         gsi3pk = "TITLES#{team}", gsi3sk = "TASK#{id}",
         gsi4pk = "TEAMOWNER#{team}", gsi4sk = "OWNER#{owner}#TASK#{id}")]
struct Task {
    team: u8,
    id: u8,
    owner: u8,
    open: bool,
    title: String,
    #[dynamo(ttl)]
    expires_at: Option<u64>,
    /// Without unique values, so its puts take the plain path that keeps a creation time.
    #[dynamo(created_at)]
    created_at: u64,
    /// A counter (`ADD`), which version 1 does not write: a rekey of a task it wrote reads it
    /// at its default.
    #[serde(default)]
    hits: u32,
    /// The last sequence number a guarded count applied (`advance`).
    #[serde(default)]
    applied: u32,
}

impl Task {
    fn is_open(open: &bool) -> bool {
        *open
    }
}

/// The code before the migration: the same task without `gsi4`, schema version 1, as a
/// process still running it writes it.
mod v1 {
    use super::Together;
    use serde::{Deserialize, Serialize};
    use singletable::Entity;

    #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[dynamo(table = Together, pk = "TEAM#{team}", sk = "TASK#{id}",
             gsi1pk = "OPEN#{team}#{shard(id, 4)}", gsi1sk = "TASK#{id}", gsi1_when = Task::is_open(open),
             gsi2pk = "OWNER#{owner}", gsi2sk = "TASK#{team}#{id}",
             gsi3pk = "TITLES#{team}", gsi3sk = "TASK#{id}")]
    pub struct Task {
        pub team: u8,
        pub id: u8,
        pub owner: u8,
        pub open: bool,
        pub title: String,
        #[dynamo(ttl)]
        pub expires_at: Option<u64>,
        #[dynamo(created_at)]
        pub created_at: u64,
    }

    impl Task {
        fn is_open(open: &bool) -> bool {
            *open
        }
    }

    impl From<&super::Task> for Task {
        fn from(task: &super::Task) -> Self {
            Task {
                team: task.team,
                id: task.id,
                owner: task.owner,
                open: task.open,
                title: task.title.clone(),
                expires_at: task.expires_at,
                created_at: task.created_at,
            }
        }
    }
}

/// Task's keys as a later deployment changes them: the open tasks' index over 8 keys, at the
/// same schema version (what the plan must refuse) or at the next one (what it notes). Only
/// planned, never applied.
mod resharded {
    use super::Together;
    use serde::{Deserialize, Serialize};
    use singletable::Entity;

    #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[dynamo(table = Together, schema_version = 2, pk = "TEAM#{team}", sk = "TASK#{id}",
             gsi1pk = "OPEN#{team}#{shard(id, 8)}", gsi1sk = "TASK#{id}", gsi1_when = Task::is_open(open),
             gsi2pk = "OWNER#{owner}", gsi2sk = "TASK#{team}#{id}",
             gsi3pk = "TITLES#{team}", gsi3sk = "TASK#{id}",
             gsi4pk = "TEAMOWNER#{team}", gsi4sk = "OWNER#{owner}#TASK#{id}")]
    pub struct Task {
        pub team: u8,
        pub id: u8,
        pub owner: u8,
        pub open: bool,
        pub title: String,
    }

    #[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
    #[dynamo(table = Together, name = "Task", schema_version = 3, pk = "TEAM#{team}", sk = "TASK#{id}",
             gsi1pk = "OPEN#{team}#{shard(id, 8)}", gsi1sk = "TASK#{id}", gsi1_when = Task::is_open(open),
             gsi2pk = "OWNER#{owner}", gsi2sk = "TASK#{team}#{id}",
             gsi3pk = "TITLES#{team}", gsi3sk = "TASK#{id}",
             gsi4pk = "TEAMOWNER#{team}", gsi4sk = "OWNER#{owner}#TASK#{id}")]
    pub struct Next {
        pub team: u8,
        pub id: u8,
        pub owner: u8,
        pub open: bool,
        pub title: String,
    }

    impl Task {
        fn is_open(open: &bool) -> bool {
            *open
        }
    }
}

/// What the INCLUDE index holds of a task.
#[derive(singletable::Projection, Deserialize, Debug, PartialEq)]
#[dynamo(entity = Task, index = gsi3)]
struct TaskTitle {
    title: String,
}

/// A team's log, appended only if newer than every note it accepted (a latest pointer in the
/// partition, one of the library's records). Its sort key starts with the entity's name, as
/// the pointer's (`Note#LATEST`) does, so every query of the log reads the pointer too.
#[derive(Entity, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[dynamo(table = Together, pk = "TEAM#{team}", sk = "Note#{seq}")]
struct Note {
    team: u8,
    seq: u8,
    text: String,
}

#[derive(singletable::Collection, Debug, PartialEq)]
enum TeamItem {
    Member(Member),
    Task(Task),
    Note(Note),
}

const TEAMS: u8 = 2;
const IDS: u8 = 3;
const OWNERS: u8 = 2;

/// One operation of a sequence. Expiries are seconds after the model's clock.
#[derive(Debug, Clone)]
enum Step {
    PutMember {
        team: u8,
        id: u8,
        email: u8,
        nick: u8,
        expires_in: Option<u8>,
        only_if_absent: bool,
        stale: bool,
    },
    ExpireMember {
        team: u8,
        id: u8,
        expires_in: Option<u8>,
    },
    /// A member deleted whatever is there, or only if a live one is (`only_if_exists`: an
    /// expired member is none).
    DeleteMember {
        team: u8,
        id: u8,
        only_if_exists: bool,
    },
    /// A member's unique values changed in place (an update setting its email, its own or a
    /// new one, and its nickname), under the version it was read at or a stale one.
    ChangeMember {
        team: u8,
        id: u8,
        email: Option<u8>,
        nick: u8,
        stale: bool,
    },
    /// A member moved to another key (a rekey), with a new email or its own: its values go
    /// with it, and an expired member it lands on is replaced, that member's values released.
    /// `which` picks one of the live members, in key order, and `to` is a key, or (`None`) an
    /// expired member's, or else a free one in its team. With `stale`, another writer changes
    /// the member after this one read it, and the move of what it read is refused.
    RekeyMember {
        which: u8,
        to: Option<(u8, u8)>,
        email: Option<u8>,
        stale: bool,
    },
    /// A put by the new code, or by a process still running version 1 of the task; with
    /// `keys_only`, that version 1 item as another tool writes it, its team and id only in its
    /// keys, which every read path takes back from them.
    PutTask {
        team: u8,
        id: u8,
        owner: u8,
        open: bool,
        expires_in: Option<u8>,
        legacy: bool,
        keys_only: bool,
    },
    CloseTask {
        team: u8,
        id: u8,
    },
    /// A task's counter counted up (`ADD`, which a resend would apply twice), or under a
    /// sequence guard (`advance`), which makes it safe to resend. Mostly (`live`) a task there
    /// is, picked by `team` and `id` among the live ones, so that counts and guards meet.
    /// With `or_create`, an upsert: where no live task is, a new open one counted once.
    /// With `twice`, the count is delivered a second time, as a stream record may be.
    CountHit {
        team: u8,
        id: u8,
        seq: Option<i8>,
        live: bool,
        or_create: bool,
        twice: bool,
    },
    DeleteTask {
        team: u8,
        id: u8,
    },
    /// A task moved to another id; with `stale`, after another writer changed its title, so
    /// that the move of what was read is refused.
    RekeyTask {
        team: u8,
        from: u8,
        to: u8,
        stale: bool,
    },
    /// Tasks put in one `BatchWriteItem`, or loaded by `put_stream` at a rate that adapts to
    /// throttling.
    BatchPutTasks {
        team: u8,
        owner: u8,
        ids: Vec<u8>,
        streamed: bool,
    },
    /// A transaction: a new task (only if absent), the title of another (`retitle` picks one of
    /// the team's live tasks, when it has one), and (`checked`) a condition on a member (picked
    /// among those the table holds, expired ones too): that it is there (its email begins with
    /// `m`), or (`false`) that it is not (it has no email). An expired member is none to it.
    Transact {
        team: u8,
        new: u8,
        retitle: u8,
        checked: Option<(u8, bool)>,
    },
    /// Several members' puts really in flight at once.
    ConcurrentPuts {
        team: u8,
        emails: Vec<u8>,
    },
    /// The backfill of version 2: a sweep, or two distributed workers at once, while the new
    /// code puts tasks `puts` of `team`; first, the old code puts tasks `legacy` of the other
    /// team, so that the sweep's pages hold several old items at once.
    Sweep {
        distributed: bool,
        team: u8,
        puts: Vec<u8>,
        legacy: Vec<u8>,
    },
    /// The migration's plan applied: version 2's index created online and the entities' keys
    /// recorded (once; then the plan is up to date, and applying it changes nothing).
    ApplyPlan,
    /// A later deployment's plan, the open tasks' index moved from 4 shards to 8: at the same
    /// schema version, refused once version 2's keys are recorded; at version 3, noted.
    PlanResharded {
        in_place: bool,
    },
    /// The claim sweep a value newly declared unique needs, run again over members whose
    /// values the library keeps already: every live member's two values are found its own.
    ClaimSweep {
        segments: u8,
        /// Paced at an adaptive rate, which throttling lowers.
        rated: bool,
    },
    /// A guarded append to the team's log.
    Append {
        team: u8,
        seq: u8,
    },
    Advance {
        seconds: u8,
    },
}

fn step() -> impl Strategy<Value = Step> {
    let team = 0..TEAMS;
    let id = 0..IDS;
    let expiry = prop::option::of(1u8..4);
    // Member writes weigh most: their values and expiries meet the most features.
    prop_oneof![
        4 => (
            team.clone(),
            id.clone(),
            0u8..3,
            0u8..2,
            expiry.clone(),
            any::<bool>(),
            prop::bool::weighted(0.2)
        )
            .prop_map(
                |(team, id, email, nick, expires_in, only_if_absent, stale)| Step::PutMember {
                    team,
                    id,
                    email,
                    nick,
                    expires_in,
                    only_if_absent,
                    stale
                }
            ),
        3 => (team.clone(), id.clone(), expiry.clone()).prop_map(|(team, id, expires_in)| {
            Step::ExpireMember {
                team,
                id,
                expires_in,
            }
        }),
        1 => (team.clone(), id.clone(), any::<bool>()).prop_map(|(team, id, only_if_exists)| {
            Step::DeleteMember {
                team,
                id,
                only_if_exists,
            }
        }),
        2 => (
            team.clone(),
            id.clone(),
            prop::option::of(0u8..3),
            0u8..3,
            prop::bool::weighted(0.2)
        )
            .prop_map(|(team, id, email, nick, stale)| Step::ChangeMember {
                team,
                id,
                email,
                nick,
                stale
            }),
        3 => (
            0u8..8,
            prop::option::of((team.clone(), id.clone())),
            prop::option::of(0u8..3),
            prop::bool::weighted(0.3)
        )
            .prop_map(|(which, to, email, stale)| Step::RekeyMember {
                which,
                to,
                email,
                stale
            }),
        3 => (
            team.clone(),
            id.clone(),
            0..OWNERS,
            any::<bool>(),
            expiry,
            prop::bool::weighted(0.35),
            any::<bool>()
        )
            .prop_map(|(team, id, owner, open, expires_in, legacy, keys_only)| Step::PutTask {
                team,
                id,
                owner,
                open,
                expires_in,
                legacy,
                keys_only: legacy && keys_only
            }),
        1 => (
            any::<bool>(),
            team.clone(),
            prop::collection::btree_set(id.clone(), 0..3),
            prop::collection::btree_set(id.clone(), 0..4)
        )
            .prop_map(|(distributed, team, puts, legacy)| Step::Sweep {
                distributed,
                team,
                puts: puts.into_iter().collect(),
                legacy: legacy.into_iter().collect()
            }),
        1 => (team.clone(), id.clone()).prop_map(|(team, id)| Step::CloseTask { team, id }),
        2 => (
            team.clone(),
            id.clone(),
            prop::option::of(-1i8..3),
            prop::bool::weighted(0.7),
            prop::bool::weighted(0.4),
            prop::bool::weighted(0.3)
        )
            .prop_map(|(team, id, seq, live, or_create, twice)| Step::CountHit {
                team,
                id,
                seq,
                live,
                or_create,
                twice
            }),
        1 => (team.clone(), id.clone()).prop_map(|(team, id)| Step::DeleteTask { team, id }),
        1 => (team.clone(), id.clone(), id.clone(), prop::bool::weighted(0.3)).prop_map(
            |(team, from, to, stale)| Step::RekeyTask {
                team,
                from,
                to,
                stale
            }
        ),
        1 => (
            team.clone(),
            0..OWNERS,
            prop::collection::btree_set(id.clone(), 1..3),
            any::<bool>()
        )
            .prop_map(|(team, owner, ids, streamed)| Step::BatchPutTasks {
                team,
                owner,
                ids: ids.into_iter().collect(),
                streamed
            }),
        1 => (
            team.clone(),
            id.clone(),
            id,
            prop::option::of((0u8..8, any::<bool>()))
        )
            .prop_map(|(team, new, retitle, checked)| Step::Transact {
                team,
                new,
                retitle,
                checked
            }),
        1 => (team, prop::collection::vec(0u8..3, 2..4))
            .prop_map(|(team, emails)| Step::ConcurrentPuts { team, emails }),
        1 => (0..TEAMS, 0u8..6).prop_map(|(team, seq)| Step::Append { team, seq }),
        1 => (1u8..3, any::<bool>())
            .prop_map(|(segments, rated)| Step::ClaimSweep { segments, rated }),
        1 => Just(Step::ApplyPlan),
        1 => any::<bool>().prop_map(|in_place| Step::PlanResharded { in_place }),
        2 => (1u8..6).prop_map(|seconds| Step::Advance { seconds }),
    ]
}

/// What the documented semantics say the table holds, by key.
#[derive(Debug, Default, Clone)]
struct Model {
    /// The model's clock, in epoch seconds.
    now: u64,
    members: BTreeMap<(u8, u8), Member>,
    tasks: BTreeMap<(u8, u8), Task>,
    /// The tasks whose stored item version 1 wrote (not backfilled, nor rewritten since).
    old_tasks: BTreeSet<(u8, u8)>,
    notes: BTreeMap<(u8, u8), Note>,
    /// Whether version 2's index exists (the plan was applied).
    indexed: bool,
    /// The entities whose keys at their schema version the table records (apply records them).
    recorded: BTreeSet<&'static str>,
}

/// A member's unique values, each under the name a refusal of it gives (`Error::Unique`'s
/// `field`): its email, and its nickname within its team.
fn unique_values(member: &Member) -> [(&'static str, String); 2] {
    [
        ("email", member.email.clone()),
        ("team+nick", format!("{}/{}", member.team, member.nick)),
    ]
}

fn live(expires_at: Option<u64>, now: u64) -> bool {
    expires_at.is_none_or(|at| at >= now)
}

impl Model {
    /// A team's partition in sort key order (`MEMBER#` < `Note#` < `TASK#`; ids are
    /// fixed-width): its live members, its notes and its live tasks.
    fn partition(&self, team: u8) -> Vec<TeamItem> {
        let in_team = |key: &(u8, u8)| key.0 == team;
        let members = (self.members.iter())
            .filter(|(key, m)| in_team(key) && live(m.expires_at, self.now))
            .map(|(_, m)| TeamItem::Member(m.clone()));
        let notes = (self.notes.iter())
            .filter(|(key, _)| in_team(key))
            .map(|(_, n)| TeamItem::Note(n.clone()));
        let tasks = (self.tasks.iter())
            .filter(|(key, t)| in_team(key) && live(t.expires_at, self.now))
            .map(|(_, t)| TeamItem::Task(t.clone()));
        members.chain(notes).chain(tasks).collect()
    }

    fn live_member(&self, key: (u8, u8)) -> Option<&Member> {
        self.members
            .get(&key)
            .filter(|member| live(member.expires_at, self.now))
    }

    fn live_task(&self, key: (u8, u8)) -> Option<&Task> {
        self.tasks
            .get(&key)
            .filter(|task| live(task.expires_at, self.now))
    }

    /// The task the new code writes as `new`: it keeps a live task's creation time, or is
    /// stamped `now_ms`.
    fn put_task(&mut self, new: Task, now_ms: u64) {
        let key = (new.team, new.id);
        let created_at = self.live_task(key).map_or(now_ms, |old| old.created_at);
        self.tasks.insert(key, Task { created_at, ..new });
        self.old_tasks.remove(&key);
    }

    /// Another live member holding `member`'s email or its nickname in its team.
    fn unique_clash(&self, member: &Member) -> bool {
        let values = unique_values(member);
        self.members.iter().any(|(key, other)| {
            *key != (member.team, member.id)
                && live(other.expires_at, self.now)
                && unique_values(other)
                    .iter()
                    .any(|value| values.contains(value))
        })
    }
}

/// The clock of the `Db` under test, in epoch seconds: still but for the steps that advance
/// it, so that the library and the model judge expiry at the same time. It starts two minutes
/// ahead of real time, which a case never outlasts, so that the engine's own time-to-live
/// deletions (on real time) only ever remove what the model already calls expired.
struct Clock(AtomicU64);

impl Clock {
    fn started() -> Clock {
        Clock(AtomicU64::new(real_now() + 120))
    }

    fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn real_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Runtime::new().unwrap())
}

fn member(team: u8, id: u8, email: u8, nick: u8, expires_at: Option<u64>) -> Member {
    Member {
        team,
        id,
        email: format!("m{email}@example.com"),
        nick: format!("nick{nick}"),
        expires_at,
        version: 0,
        created_at: 0,
        updated_at: 0,
    }
}

/// A task as a form would make it: its `created_at` a placeholder the library replaces.
fn task(team: u8, id: u8, owner: u8, open: bool, title: &str, expires_at: Option<u64>) -> Task {
    Task {
        team,
        id,
        owner,
        open,
        title: title.to_owned(),
        expires_at,
        created_at: PLACEHOLDER,
        hits: 0,
        applied: 0,
    }
}

/// The `created_at` values carry: the library keeps the stored time, or stamps a new item's.
const PLACEHOLDER: u64 = 946_684_800_000;

/// Runs one step on the engine and on the model, and checks that they agree on its outcome.
async fn apply(
    (db, jobs): (&Db<Together>, &Db<Together>),
    clock: &Clock,
    model: &mut Model,
    step: &Step,
) -> Resync {
    model.now = clock.now();
    let now = model.now;
    // What the library stamps: the `Db`'s clock, still during a step.
    let now_ms = now * 1000;
    match step.clone() {
        Step::PutMember {
            team,
            id,
            email,
            nick,
            expires_in,
            only_if_absent,
            stale,
        } => {
            let mut new = member(
                team,
                id,
                email,
                nick,
                expires_in.map(|s| now + u64::from(s)),
            );
            let stored = model.live_member((team, id)).cloned();
            let version = stored.as_ref().map_or(0, |stored| stored.version);
            new.version = if stale { version + 1 } else { version };
            new.created_at = PLACEHOLDER;
            let put = db.put(&new);
            let sent = if only_if_absent {
                put.only_if_absent().send().await
            } else {
                put.send().await
            };
            if let Some(resync) = unsettled(&sent, || Resync::members([(team, id)])) {
                return resync;
            }
            // The claims of the values go in the item's own transaction, so a value another
            // live member holds is the first thing reported.
            let expected = if model.unique_clash(&new) {
                "unique"
            } else if only_if_absent && stored.is_some() {
                "condition_failed"
            } else if !only_if_absent && new.version != version {
                "version_conflict"
            } else {
                "ok"
            };
            assert_eq!(outcome(&sent), expected, "{step:?}: {sent:?}");
            if sent.is_ok() {
                new.version = if only_if_absent { 1 } else { version + 1 };
                // The stored creation time is kept, and a new item's is this write's time.
                new.created_at = stored.map_or(now_ms, |stored| stored.created_at);
                new.updated_at = now_ms;
                model.members.insert((team, id), new);
            }
        }
        Step::ExpireMember {
            team,
            id,
            expires_in,
        } => {
            let expires_at = expires_in.map(|s| now + u64::from(s));
            let sent = db
                .update(Member::key(team, id).unwrap())
                .set(Member::EXPIRES_AT, expires_at)
                .send()
                .await;
            if let Some(resync) = unsettled(&sent, || Resync::members([(team, id)])) {
                return resync;
            }
            match model.live_member((team, id)).cloned() {
                None => assert_eq!(outcome(&sent), "not_found", "{step:?}: {sent:?}"),
                Some(mut stored) => {
                    let updated = sent.unwrap();
                    stored.expires_at = expires_at;
                    stored.version += 1;
                    stored.updated_at = now_ms;
                    assert_eq!(updated, stored);
                    model.members.insert((team, id), stored);
                }
            }
        }
        Step::DeleteMember {
            team,
            id,
            only_if_exists,
        } => {
            let delete = db.delete(Member::key(team, id).unwrap());
            let sent = if only_if_exists {
                delete.only_if_exists().send().await
            } else {
                delete.send().await
            };
            if let Some(resync) = unsettled(&sent, || Resync::members([(team, id)])) {
                return resync;
            }
            // An expired member stays, with its values, until DynamoDB's time to live removes it.
            if only_if_exists && model.live_member((team, id)).is_none() {
                assert_eq!(outcome(&sent), "not_found", "{step:?}: {sent:?}");
            } else {
                sent.unwrap();
                model.members.remove(&(team, id));
            }
        }
        Step::ChangeMember {
            team,
            id,
            email,
            nick,
            stale,
        } => {
            let stored = model.live_member((team, id)).cloned();
            let email = match (email, &stored) {
                (Some(email), _) => format!("m{email}@example.com"),
                (None, Some(stored)) => stored.email.clone(),
                (None, None) => "m0@example.com".to_owned(),
            };
            let nick = format!("nick{nick}");
            let update = db
                .update(Member::key(team, id).unwrap())
                .set(Member::EMAIL, email.clone())
                .set(Member::NICK, nick.clone());
            let expected_version = stored.as_ref().map(|m| m.version + u64::from(stale));
            let sent = match expected_version {
                Some(version) => update.expect_version(version).send().await,
                None => update.send().await,
            };
            if let Some(resync) = unsettled(&sent, || Resync::members([(team, id)])) {
                return resync;
            }
            let Some(mut stored) = stored else {
                assert_eq!(outcome(&sent), "not_found", "{step:?}: {sent:?}");
                return Resync::default();
            };
            stored.email = email;
            stored.nick = nick;
            // The claims go in the update's transaction: a value another live member holds is
            // the first thing reported.
            let expected = if model.unique_clash(&stored) {
                "unique"
            } else if stale {
                "version_conflict"
            } else {
                "ok"
            };
            assert_eq!(outcome(&sent), expected, "{step:?}: {sent:?}");
            if let Ok(updated) = sent {
                stored.version += 1;
                stored.updated_at = now_ms;
                assert_eq!(updated, stored, "{step:?}");
                model.members.insert((team, id), stored);
            }
        }
        Step::RekeyMember {
            which,
            to,
            email,
            stale,
        } => {
            let live_members: Vec<&Member> = (model.members.values())
                .filter(|m| live(m.expires_at, now))
                .collect();
            let old = live_members.get(usize::from(which) % live_members.len().max(1));
            let Some(old) = old.map(|&member| member.clone()) else {
                return Resync::default();
            };
            let from = (old.team, old.id);
            // Onto an expired member, or else a free id of its team.
            let expired = (model.members.values())
                .find(|m| !live(m.expires_at, now))
                .map(|m| (m.team, m.id));
            let free = (0..IDS)
                .map(|id| (old.team, id))
                .find(|&key| model.live_member(key).is_none());
            let Some(to) = to.or(expired).or(free) else {
                return Resync::default();
            };
            let mut moved = Member {
                team: to.0,
                id: to.1,
                ..old.clone()
            };
            if let Some(email) = email {
                moved.email = format!("m{email}@example.com");
            }
            // Another writer's change after `old` was read: a versioned update that leaves the
            // values as they are.
            let mut read_stale = false;
            if stale && from != to {
                let other = db
                    .update(Member::key(from.0, from.1).unwrap())
                    .set(Member::NICK, old.nick.clone())
                    .send()
                    .await;
                if let Some(resync) = unsettled(&other, || Resync::members([from])) {
                    return resync;
                }
                if let Ok(changed) = other {
                    let mut expected = old.clone();
                    expected.version += 1;
                    expected.updated_at = now_ms;
                    assert_eq!(changed, expected, "{step:?}: the other writer's change");
                    model.members.insert(from, changed);
                    read_stale = true;
                }
            }
            let sent = db.rekey(&old, &moved).send().await;
            if let Some(resync) = unsettled(&sent, || Resync::members([from, to])) {
                return resync;
            }
            // A value a live member other than the two holds is reported first: the claims go
            // in the move's transaction. One the member at the new key holds is that key's,
            // which the move may claim; the move then fails on the key.
            let values = unique_values(&moved);
            let clash = model.members.iter().any(|(key, other)| {
                ![from, to].contains(key)
                    && live(other.expires_at, now)
                    && unique_values(other)
                        .iter()
                        .any(|value| values.contains(value))
            });
            if from == to {
                // A move to its own key: the delete and the put name one item.
                assert!(sent.is_err(), "{step:?}: {sent:?}");
            } else if clash {
                assert_eq!(outcome(&sent), "unique", "{step:?}: {sent:?}");
            } else if read_stale {
                // The delete of what was read fails first: the member changed since.
                assert_eq!(outcome(&sent), "version_conflict", "{step:?}: {sent:?}");
            } else if model.live_member(to).is_some() {
                assert_eq!(outcome(&sent), "condition_failed", "{step:?}: {sent:?}");
            } else {
                sent.unwrap();
                model.members.remove(&from);
                // The next version and this write's time; the creation time moves with it.
                moved.version = old.version + 1;
                moved.updated_at = now_ms;
                model.members.insert(to, moved);
            }
        }
        Step::PutTask {
            team,
            id,
            owner,
            open,
            expires_in,
            legacy,
            keys_only,
        } => {
            let new = task(
                team,
                id,
                owner,
                open,
                &format!("t{id}"),
                expires_in.map(|s| now + u64::from(s)),
            );
            let sent = if keys_only {
                // As a put by the library would write it, the creation time kept or stamped,
                // less the fields its keys hold.
                let created_at = model
                    .live_task((team, id))
                    .map_or(now_ms, |old| old.created_at);
                let old = v1::Task::from(&Task {
                    created_at,
                    ..new.clone()
                });
                let mut item = singletable::item::encode(&old).unwrap();
                item.remove("team");
                item.remove("id");
                singletable::testing::put_raw(db, item).await
            } else if legacy {
                db.put(&v1::Task::from(&new)).send().await
            } else {
                db.put(&new).send().await
            };
            if let Some(resync) = unsettled(&sent, || Resync::tasks([(team, id)])) {
                return resync;
            }
            sent.unwrap();
            model.put_task(new, now_ms);
            if legacy {
                model.old_tasks.insert((team, id));
            }
        }
        Step::Sweep {
            distributed,
            team,
            puts,
            legacy,
        } => {
            let other = (team + 1) % TEAMS;
            for &id in &legacy {
                let written = task(other, id, 0, true, &format!("t{id}"), None);
                let sent = db.put(&v1::Task::from(&written)).send().await;
                if let Some(resync) = unsettled(&sent, || Resync::tasks([(other, id)])) {
                    return resync;
                }
                sent.unwrap();
                model.put_task(written, now_ms);
                model.old_tasks.insert((other, id));
            }
            let old = model.old_tasks.clone();
            let new: Vec<Task> = puts
                .iter()
                .map(|&id| task(team, id, 1, true, "swept", None))
                .collect();
            let writes = futures::future::join_all(new.iter().map(|task| db.put(task).send()));
            let (written, counts) = futures::join!(writes, sweep(jobs, distributed));
            // Each old item was backfilled, or found changed by a put in flight (one whose
            // outcome was lost too), or put before the sweep read it; nothing else was written.
            let mut resync = Resync::default();
            let mut raced = 0;
            let mut put = Vec::new();
            for (task, sent) in new.into_iter().zip(written) {
                let key = (task.team, task.id);
                match unsettled(&sent, || Resync::tasks([key])) {
                    Some(unknown) if !unknown.is_empty() => resync.add(unknown),
                    Some(_) => continue,
                    None => {
                        sent.unwrap();
                        put.push(task);
                    }
                }
                raced += u64::from(old.contains(&key));
            }
            let old = old.len() as u64;
            assert!(
                counts.failed == 0 && counts.backfilled <= old && counts.backfilled + raced >= old,
                "{step:?}: {counts:?} of {old} old"
            );
            for task in put {
                model.put_task(task, now_ms);
            }
            model.old_tasks.clear();
            return resync;
        }
        Step::CloseTask { team, id } => {
            let sent = db
                .update(Task::key(team, id).unwrap())
                .set(Task::OPEN, false)
                .send()
                .await;
            if let Some(resync) = unsettled(&sent, || Resync::tasks([(team, id)])) {
                return resync;
            }
            match model.live_task((team, id)).cloned() {
                None => assert_eq!(outcome(&sent), "not_found", "{step:?}: {sent:?}"),
                Some(mut stored) => {
                    stored.open = false;
                    assert_eq!(sent.unwrap(), stored);
                    model.tasks.insert((team, id), stored);
                }
            }
        }
        Step::CountHit {
            team,
            id,
            seq,
            live: pick_live,
            or_create,
            twice,
        } => {
            let live_tasks: Vec<(u8, u8)> = (model.tasks.iter())
                .filter(|(_, t)| live(t.expires_at, now))
                .map(|(key, _)| *key)
                .collect();
            let picked = usize::from(team * IDS + id) % live_tasks.len().max(1);
            let (team, id) = match live_tasks.get(picked) {
                Some(&key) if pick_live => key,
                _ => (team, id),
            };
            // `seq` counts from the stored guard: past it (applied), the guard itself (a
            // replay of the count that stored it), or before it (refused).
            let guard = model.live_task((team, id)).map_or(0, |task| task.applied);
            let seq = seq.map(|past| {
                u32::try_from(i64::from(guard) + i64::from(past)).map_or(1, |seq| seq.max(1))
            });
            // The task an upsert creates: open, owned by 0, with the update applied to it.
            let initial = task(team, id, 0, true, "counted", None);
            for _delivery in 0..=u8::from(twice) {
                let update = db.update(Task::key(team, id).unwrap());
                let update = match seq {
                    Some(seq) => update.advance(Task::APPLIED, seq),
                    None => update,
                };
                let update = update.add(Task::HITS, 1);
                let sent = if or_create {
                    update.or_create(&initial).send().await
                } else {
                    update.send().await
                };
                if let Some(resync) = unsettled(&sent, || Resync::tasks([(team, id)])) {
                    return resync;
                }
                match model.live_task((team, id)).cloned() {
                    None if or_create => {
                        let created = Task {
                            hits: 1,
                            applied: seq.unwrap_or(0),
                            ..initial.clone()
                        };
                        model.put_task(created, now_ms);
                        let stored = model.live_task((team, id)).cloned();
                        assert_eq!(sent.as_ref().ok(), stored.as_ref(), "{step:?}: {sent:?}");
                    }
                    None => assert_eq!(outcome(&sent), "not_found", "{step:?}: {sent:?}"),
                    // The guard holds this sequence number: the count applied already,
                    // returned as it is.
                    Some(stored) if seq == Some(stored.applied) => {
                        assert_eq!(sent.as_ref().ok(), Some(&stored), "{step:?}: {sent:?}");
                    }
                    // The guard holds a later sequence number.
                    Some(stored) if seq.is_some_and(|seq| seq < stored.applied) => {
                        assert_eq!(outcome(&sent), "condition_failed", "{step:?}: {sent:?}");
                    }
                    Some(mut stored) => {
                        stored.hits += 1;
                        stored.applied = seq.unwrap_or(stored.applied);
                        assert_eq!(sent.unwrap(), stored, "{step:?}");
                        model.tasks.insert((team, id), stored);
                    }
                }
            }
        }
        Step::ApplyPlan => {
            let entities = [Member::SCHEMA, Task::SCHEMA, Note::SCHEMA];
            let migration = jobs.admin().table_migration(&entities);
            let applied = migration
                .poll_interval(Duration::from_millis(20))
                .send()
                .await;
            let recorded_by = |plan: &singletable::migrate::Plan| -> BTreeSet<&'static str> {
                (plan.actions.iter())
                    .filter_map(|action| match action {
                        PlanAction::RecordKeys { entity, .. } => Some(*entity),
                        _ => None,
                    })
                    .collect()
            };
            let all: BTreeSet<&'static str> = entities.iter().map(|entity| entity.name).collect();
            match applied {
                Ok(applied) => {
                    let recorded = recorded_by(&applied.plan);
                    let unrecorded: BTreeSet<_> =
                        all.difference(&model.recorded).copied().collect();
                    assert_eq!(recorded, unrecorded, "{}", applied.plan);
                    let created = applied.plan.actions.len() - recorded.len();
                    assert_eq!(created, usize::from(!model.indexed), "{:?}", applied.plan);
                    model.recorded = all;
                    // A test's table has none of the generated code's protection: the plan
                    // says so, and apply leaves it alone.
                    let unprotected = applied.plan.notes.iter().any(|note| {
                        matches!(note, singletable::migrate::Note::Setting { setting, .. }
                            if *setting == "deletion_protection")
                    });
                    assert!(unprotected, "{}", applied.plan);
                    model.indexed = true;
                }
                // Refused or lost after every resend: the index is there, or not yet.
                Err(error) => {
                    assert!(refused(&error) || lost(&error), "{step:?}: {error:?}");
                    let plan = jobs.admin().table_migration(&entities);
                    let plan = plan.plan().await.unwrap();
                    let recorded = recorded_by(&plan);
                    model.indexed = plan.actions.len() == recorded.len();
                    model.recorded = all.difference(&recorded).copied().collect();
                }
            }
        }
        Step::PlanResharded { in_place } => {
            let (schema, version) = match in_place {
                true => (resharded::Task::SCHEMA, 2),
                false => (resharded::Next::SCHEMA, 3),
            };
            let plan = match jobs.admin().table_migration(&[schema]).plan().await {
                Ok(plan) => plan,
                // Refused or lost after every resend: a plan changes nothing.
                Err(error) => {
                    assert!(refused(&error) || lost(&error), "{step:?}: {error:?}");
                    return Resync::default();
                }
            };
            let expected_change = vec![
                "the partition key of index OpenTasks was `OPEN#{team:3}#{shard(id, 4)}`, now \
                 `OPEN#{team:3}#{shard(id, 8)}` (4 shards, now 8)"
                    .to_owned(),
            ];
            let recorded = model.recorded.contains("Task");
            let blocked: Vec<&Vec<String>> = (plan.blockers.iter())
                .filter_map(|blocker| match blocker {
                    Blocker::KeysChanged {
                        entity: "Task",
                        schema_version,
                        changes,
                    } if *schema_version == version => Some(changes),
                    _ => None,
                })
                .collect();
            let noted: Vec<&Vec<String>> = (plan.notes.iter())
                .filter_map(|note| match note {
                    PlanNote::KeysChanged {
                        entity: "Task",
                        recorded_version: 2,
                        schema_version: 3,
                        changes,
                    } => Some(changes),
                    _ => None,
                })
                .collect();
            let to_record = (plan.actions.iter()).any(|action| {
                action
                    == &PlanAction::RecordKeys {
                        entity: "Task",
                        schema_version: version,
                    }
            });
            // Version 2's keys recorded: the same version with other keys is refused, the next
            // one is noted; version 3 is never applied, so its keys are still to record.
            match (in_place, recorded) {
                (true, true) => {
                    assert!(
                        blocked == [&expected_change] && !to_record,
                        "{step:?}: {plan}"
                    )
                }
                (false, true) => assert!(
                    noted == [&expected_change] && blocked.is_empty() && to_record,
                    "{step:?}: {plan}"
                ),
                (_, false) => assert!(
                    noted.is_empty() && blocked.is_empty() && to_record,
                    "{step:?}: {plan}"
                ),
            }
        }
        Step::ClaimSweep { segments, rated } => {
            let sweep = jobs.admin().claim_unique_values::<Member>();
            let sweep = sweep.segments(u32::from(segments));
            let sent = if rated {
                sweep
                    .rate(singletable::Rate::ItemsPerSecond(500.0))
                    .send()
                    .await
            } else {
                sweep.send().await
            };
            let report = sent.unwrap_or_else(|error| panic!("{step:?} ends in error: {error:?}"));
            // Expired members are passed over: their values are free already.
            let members = model.members.values().filter(|m| live(m.expires_at, now));
            let members = members.count() as u64;
            assert_eq!(
                (report.items, report.claimed, report.changed),
                (members, 2 * members, 0),
                "{report:?}"
            );
            assert!(report.duplicates.is_empty(), "{report:?}");
            assert_eq!(report.rate.is_some(), rated, "{report:?}");
        }
        Step::DeleteTask { team, id } => {
            let sent = db.delete(Task::key(team, id).unwrap()).send().await;
            if let Some(resync) = unsettled(&sent, || Resync::tasks([(team, id)])) {
                return resync;
            }
            sent.unwrap();
            model.tasks.remove(&(team, id));
            model.old_tasks.remove(&(team, id));
        }
        Step::RekeyTask {
            team,
            from,
            to,
            stale,
        } => {
            let Some(old) = model.live_task((team, from)).cloned() else {
                return Resync::default();
            };
            let mut moved = old.clone();
            moved.id = to;
            // Another writer's change after `old` was read (the task has no version: the move
            // is conditioned on every field as read).
            let mut read_stale = false;
            if stale && from != to {
                let title = format!("{} (edited)", old.title);
                let other = db
                    .update(Task::key(team, from).unwrap())
                    .set(Task::TITLE, title.clone())
                    .send()
                    .await;
                if let Some(resync) = unsettled(&other, || Resync::tasks([(team, from)])) {
                    return resync;
                }
                if let Ok(changed) = other {
                    let expected = Task {
                        title,
                        ..old.clone()
                    };
                    assert_eq!(changed, expected, "{step:?}: the other writer's change");
                    model.tasks.insert((team, from), changed);
                    read_stale = true;
                }
            }
            let sent = db.rekey(&old, &moved).send().await;
            if let Some(resync) = unsettled(&sent, || Resync::tasks([(team, from), (team, to)])) {
                return resync;
            }
            if from == to {
                // A move to its own key: the delete and the put name one item.
                assert!(sent.is_err(), "{step:?}: {sent:?}");
            } else if read_stale || model.live_task((team, to)).is_some() {
                // Changed since it was read, or its new key taken.
                assert_eq!(outcome(&sent), "condition_failed", "{step:?}: {sent:?}");
            } else {
                sent.unwrap();
                model.tasks.remove(&(team, from));
                model.old_tasks.remove(&(team, from));
                model.tasks.insert((team, to), moved);
                model.old_tasks.remove(&(team, to));
            }
        }
        Step::BatchPutTasks {
            team,
            owner,
            ref ids,
            streamed,
        } => {
            // A batch cannot ask for the stored time: it writes the value's.
            let tasks: Vec<Task> = ids
                .iter()
                .map(|&id| task(team, id, owner, true, "batched", None))
                .collect();
            let sent = if streamed {
                db.put_stream(futures::stream::iter(tasks.clone()))
                    .rate(singletable::Rate::ItemsPerSecond(500.0))
                    .send()
                    .await
            } else {
                let batch = tasks
                    .iter()
                    .fold(db.batch_write(), |batch, task| batch.put(task));
                batch.send().await
            };
            let output = match sent {
                Ok(output) => output,
                Err(Error::BatchWrite { partial, source }) if source.is_throttling() => *partial,
                // A request whose outcome was lost: its writes may or may not be there.
                Err(Error::BatchWrite { source, .. }) => {
                    let sent = Err::<(), _>(*source);
                    let keys = || Resync::tasks(ids.iter().map(|&id| (team, id)));
                    return unsettled(&sent, keys).unwrap_or_else(|| panic!("{step:?}: {sent:?}"));
                }
                Err(other) => panic!("{step:?}: {other:?}"),
            };
            // What DynamoDB left unprocessed, or refused, is returned whole, and was not
            // written; the rest was.
            let unwritten: Vec<_> = output.unprocessed.iter().map(|write| &write.key).collect();
            let (tasks, left): (Vec<Task>, Vec<Task>) = tasks.into_iter().partition(|task| {
                !unwritten.contains(&&Task::key(task.team, task.id).unwrap().text())
            });
            assert_eq!(
                (output.written, left.len()),
                (tasks.len(), output.unprocessed.len())
            );
            for task in tasks {
                model.old_tasks.remove(&(team, task.id));
                model.tasks.insert((team, task.id), task);
            }
        }
        Step::Transact {
            team,
            new,
            retitle,
            checked,
        } => {
            let live_tasks: Vec<u8> = (model.tasks.iter())
                .filter(|((of, _), t)| *of == team && live(t.expires_at, now))
                .map(|((_, id), _)| *id)
                .collect();
            let retitle = live_tasks
                .get(usize::from(retitle) % live_tasks.len().max(1))
                .copied()
                .unwrap_or(retitle);
            let stored: Vec<(u8, u8)> = model.members.keys().copied().collect();
            let checked = checked.map(|(which, present)| {
                let picked = stored.get(usize::from(which) % stored.len().max(1));
                (picked.copied().unwrap_or((team, which)), present)
            });
            let created = task(team, new, 0, true, "created", None);
            let mut transaction = db
                .transaction()
                .with(db.put(&created).only_if_absent())
                .with(
                    db.update(Task::key(team, retitle).unwrap())
                        .set(Task::TITLE, "retitled".to_owned()),
                );
            if let Some(((of, id), present)) = checked {
                let condition = if present {
                    Member::EMAIL.begins_with("m")
                } else {
                    Member::EMAIL.not_exists()
                };
                let key = Member::key(of, id).unwrap();
                transaction = transaction.with(db.condition_check(key, condition));
            }
            let sent = transaction.send().await;
            if let Some(resync) = unsettled(&sent, || Resync::tasks([(team, new), (team, retitle)]))
            {
                return resync;
            }
            let holds =
                checked.is_none_or(|(key, present)| model.live_member(key).is_some() == present);
            let applies = new != retitle
                && model.live_task((team, new)).is_none()
                && model.live_task((team, retitle)).is_some()
                && holds;
            if applies {
                sent.unwrap();
                let mut renamed = model.live_task((team, retitle)).cloned().unwrap();
                renamed.title = "retitled".into();
                model.tasks.insert((team, retitle), renamed);
                // Created in the transaction: stamped with its time.
                model.old_tasks.remove(&(team, new));
                model.tasks.insert(
                    (team, new),
                    Task {
                        created_at: now_ms,
                        ..created
                    },
                );
            } else {
                assert!(sent.is_err(), "{step:?}: {sent:?}");
            }
        }
        Step::ConcurrentPuts { team, emails } => {
            // New members only (ids past the others'), so the outcomes turn on the values: the
            // emails, and the nicknames of members moved here from these ids.
            let ids: Vec<u8> = (0..emails.len() as u8).map(|n| IDS + n).collect();
            let members: Vec<Member> = ids
                .iter()
                .zip(&emails)
                .map(|(&id, &email)| member(team, id, email, id, None))
                .collect();
            let sent = futures::future::join_all(
                members.iter().map(|m| db.put(m).only_if_absent().send()),
            )
            .await;
            // Any serial order explains it: a success per member whose values no live member
            // holds, at most; each refusal names a value that was held, before or by a success.
            let mut taken: BTreeSet<(&str, String)> = model
                .members
                .values()
                .filter(|m| live(m.expires_at, now))
                .flat_map(unique_values)
                .collect();
            // A put whose outcome was lost may hold its values too, and is read back.
            let mut unique_refusals = Vec::new();
            let mut resync = Resync::default();
            let mut maybe_taken = BTreeSet::new();
            for (member, sent) in members.iter().zip(&sent) {
                if let Some(unknown) = unsettled(sent, || Resync::members([(team, member.id)])) {
                    if !unknown.is_empty() {
                        maybe_taken.extend(unique_values(member));
                    }
                    resync.add(unknown);
                    continue;
                }
                if model.live_member((team, member.id)).is_some() {
                    assert!(
                        matches!(
                            sent,
                            Err(Error::ConditionFailed { .. } | Error::Unique { .. })
                        ),
                        "{step:?}: {sent:?}"
                    );
                    continue;
                }
                match sent {
                    Ok(()) => {
                        for value in unique_values(member) {
                            assert!(taken.insert(value.clone()), "two live holders of {value:?}");
                        }
                        let created = Member {
                            version: 1,
                            created_at: now_ms,
                            updated_at: now_ms,
                            ..member.clone()
                        };
                        model.members.insert((team, member.id), created);
                    }
                    Err(error @ Error::Unique { field, .. }) => {
                        // Its text names the field, and no value: an e-mail is personal data.
                        let text = error.to_string();
                        assert!(
                            text.contains(field) && !text.contains("@example.com"),
                            "{step:?}: {text}"
                        );
                        let named = unique_values(member)
                            .into_iter()
                            .find(|(unique, _)| unique == field);
                        unique_refusals.push(named.unwrap_or_else(|| panic!("{step:?}: {sent:?}")));
                    }
                    Err(other) => panic!("{step:?}: {other:?}"),
                }
            }
            for value in unique_refusals {
                assert!(
                    taken.contains(&value) || maybe_taken.contains(&value),
                    "{value:?} refused but free"
                );
            }
            return resync;
        }
        Step::Append { team, seq } => {
            let note = Note {
                team,
                seq,
                text: format!("note {seq}"),
            };
            let sent = db.append(&note, Note::SEQ).send().await;
            if let Some(resync) = unsettled(&sent, || Resync::notes([(team, seq)])) {
                return resync;
            }
            let appended = sent.unwrap();
            let latest = model
                .notes
                .keys()
                .filter(|k| k.0 == team)
                .map(|k| k.1)
                .max();
            match latest {
                Some(latest) if latest >= seq => {
                    assert_eq!(appended, Appended::Stale { latest }, "{step:?}")
                }
                _ => {
                    assert_eq!(appended, Appended::Accepted, "{step:?}");
                    model.notes.insert((team, seq), note);
                }
            }
        }
        Step::Advance { seconds } => {
            clock.0.fetch_add(u64::from(seconds), Ordering::SeqCst);
            model.now = clock.now();
        }
    }
    Resync::default()
}

/// Distributed sweeps run so far, each under its own name.
static SWEEPS: AtomicU64 = AtomicU64::new(0);

/// Backfills the tasks version 1 wrote: one sweep, or two distributed workers at once; what
/// they did, added up.
async fn sweep(db: &Db<Together>, distributed: bool) -> singletable::migrate::SweepCounts {
    // Pages of eight with up to two backfill writes in flight: a page is checkpointed only
    // once all its writes finished, while new code writes the same tasks.
    let sweep = || {
        (db.admin().sweep::<Task>())
            .segments(2)
            .page_size(8)
            .concurrency(2)
    };
    // A sweep rides through refused and lost requests, its look at the table's description
    // included: it ends in error under none of the runs' conditions.
    if !distributed {
        return sweep().send().await.unwrap().counts;
    }
    let name = format!("tasks-v2-{}", SWEEPS.fetch_add(1, Ordering::SeqCst));
    let worker = |id: &'static str| sweep().distributed(name.clone()).worker_id(id);
    // The second worker runs as Lambda invocations do: each until a deadline 130 ms away, so
    // close that it reads a page of one item or two before its 100 ms margin stops it, and
    // leaves its segment at the checkpoint, its lease released; invoked again while it says
    // work is left. The other worker starts once the first invocation ended, and finds the
    // segment it held released part way.
    let first_invocation = tokio::sync::Notify::new();
    let invocations = async {
        let mut counts = singletable::migrate::SweepCounts::default();
        for _ in 0..400 {
            let deadline = SystemTime::now() + Duration::from_millis(130);
            let lambda = sweep().page_size(1).distributed(name.clone());
            let report = lambda.worker_id("lambda").worker_until(deadline).await;
            let report = report.unwrap();
            first_invocation.notify_one();
            counts.add(&report.counts);
            if !report.work_left {
                return counts;
            }
        }
        panic!("a sweep of a few tasks went on for 400 invocations");
    };
    let after_the_first_invocation = async {
        first_invocation.notified().await;
        worker("w1").worker().await
    };
    let (first, second) = futures::join!(after_the_first_invocation, invocations);
    let mut counts = first.unwrap().counts;
    counts.add(&second);
    counts
}

/// How a write ended when not as the engine answers it: `None` when it did (an outcome the
/// model judges); none of its `keys` when DynamoDB refused it after every retry (for
/// throughput, or a transaction for conflicts), which applies nothing; and its `keys`, to be
/// read back into the model, when its outcome was lost (no response after every resend, or
/// a write applied whose item could not be read back).
fn unsettled<T>(sent: &Result<T, Error>, keys: impl FnOnce() -> Resync) -> Option<Resync> {
    let error = sent.as_ref().err()?;
    if refused(error) {
        assert!(error.is_retryable(), "a refusal is retryable: {error:?}");
        assert!(
            !error.is_outcome_unknown(),
            "a refusal applied nothing: {error:?}"
        );
        return Some(Resync::default());
    }
    lost(error).then(keys)
}

/// Whether DynamoDB refused the request after every retry (for throughput, or a transaction
/// for conflicts): nothing was applied.
fn refused(error: &Error) -> bool {
    error.is_throttling()
        || matches!(error, Error::TransactionCanceled(cancelled) if cancelled.is_transient())
}

/// Whether the request's outcome was lost: no response after every resend (the error says
/// the outcome is unknown), or a write applied whose item could not be read back.
fn lost(error: &Error) -> bool {
    if error.is_outcome_unknown() || matches!(error, Error::Unread { .. }) {
        return true;
    }
    // A stream poll that got no answer: retryable, and not refused for throughput.
    matches!(error, Error::Stream(_)) && error.is_retryable() && !error.is_throttling()
}

/// The items a step may or may not have changed, read back into the model from the table
/// once the step is over (its outcome was lost).
#[derive(Debug, Default)]
struct Resync {
    members: Vec<(u8, u8)>,
    tasks: Vec<(u8, u8)>,
    notes: Vec<(u8, u8)>,
}

impl Resync {
    fn members(keys: impl IntoIterator<Item = (u8, u8)>) -> Self {
        Resync {
            members: keys.into_iter().collect(),
            ..Resync::default()
        }
    }

    fn tasks(keys: impl IntoIterator<Item = (u8, u8)>) -> Self {
        Resync {
            tasks: keys.into_iter().collect(),
            ..Resync::default()
        }
    }

    fn notes(keys: impl IntoIterator<Item = (u8, u8)>) -> Self {
        Resync {
            notes: keys.into_iter().collect(),
            ..Resync::default()
        }
    }

    fn is_empty(&self) -> bool {
        self.members.is_empty() && self.tasks.is_empty() && self.notes.is_empty()
    }

    fn add(&mut self, other: Resync) {
        self.members.extend(other.members);
        self.tasks.extend(other.tasks);
        self.notes.extend(other.notes);
    }

    /// Takes each item as the table has it, expired or not, into the model.
    async fn read_into(self, db: &Db<Together>, model: &mut Model) {
        for (team, id) in self.members {
            let get = db.get(Member::key(team, id).unwrap()).include_expired();
            match get.send().await {
                Ok(member) => model.members.insert((team, id), member),
                Err(error) if error.is_not_found() => model.members.remove(&(team, id)),
                Err(other) => panic!("{other:?}"),
            };
        }
        for (team, id) in self.tasks {
            let key = Task::key(team, id).unwrap();
            let get = db.get(key.clone()).include_expired();
            match get.send().await {
                Ok(task) => model.tasks.insert((team, id), task),
                Err(error) if error.is_not_found() => model.tasks.remove(&(team, id)),
                Err(other) => panic!("{other:?}"),
            };
            // Still as version 1 wrote it, or not.
            let raw = db
                .client()
                .get_item()
                .table_name(db.table_name())
                .set_key(Some(key.to_attributes()))
                .consistent_read(true)
                .send()
                .await
                .unwrap()
                .item;
            let old =
                raw.is_some_and(|item| item.get("_sv") == Some(&AttributeValue::N("1".into())));
            if old {
                model.old_tasks.insert((team, id));
            } else {
                model.old_tasks.remove(&(team, id));
            }
        }
        for (team, seq) in self.notes {
            match db.get(Note::key(team, seq).unwrap()).send().await {
                Ok(note) => model.notes.insert((team, seq), note),
                Err(error) if error.is_not_found() => model.notes.remove(&(team, seq)),
                Err(other) => panic!("{other:?}"),
            };
        }
    }
}

fn outcome<T>(result: &Result<T, Error>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(Error::ConditionFailed { .. }) => "condition_failed",
        Err(Error::VersionConflict { .. }) => "version_conflict",
        Err(Error::Unique { .. }) => "unique",
        Err(Error::NotFound { .. }) => "not_found",
        Err(_) => "other error",
    }
}

fn text(item: &Item, name: &str) -> Option<String> {
    match item.get(name) {
        Some(AttributeValue::S(text)) => Some(text.clone()),
        _ => None,
    }
}

/// Compares every read the library offers, and the raw table, with the model.
async fn check(db: &Db<Together>, model: &Model) {
    let now = model.now;
    let sealed = db
        .clone()
        .with_cursor_key(CursorKey::new(&[7; 32]).unwrap());
    // The same service after its cursor secret rotated, the old one kept as previous: it
    // resumes what `sealed` handed out, and seals with the new one.
    let rotated = CursorKey::new(&[8; 32]).unwrap().with_previous(&[7; 32]);
    let rotated = db.clone().with_cursor_key(rotated.unwrap());
    // Every key a step can write, read at once (the reads are independent).
    let keys: Vec<(u8, u8)> = (0..TEAMS)
        .flat_map(|team| (0..IDS + 3).map(move |id| (team, id)))
        .collect();
    let (members, tasks) = futures::join!(
        futures::future::join_all(
            keys.iter()
                .map(|&(team, id)| db.get(Member::key(team, id).unwrap()).send())
        ),
        futures::future::join_all(
            keys.iter()
                .map(|&(team, id)| db.get(Task::key(team, id).unwrap()).send())
        ),
    );
    for ((key, member), task) in keys.iter().zip(members).zip(tasks) {
        match model.live_member(*key) {
            Some(expected) => assert_eq!(&member.unwrap(), expected),
            None => assert_eq!(outcome(&member), "not_found", "member {key:?}: {member:?}"),
        }
        match model.live_task(*key) {
            Some(expected) => assert_eq!(&task.unwrap(), expected),
            None => assert_eq!(outcome(&task), "not_found", "task {key:?}: {task:?}"),
        }
    }
    // The same keys in one BatchGetItem per entity, and in one TransactGetItems: the live
    // items, and no others (an expired one DynamoDB still holds is none).
    let member_keys = || {
        keys.iter()
            .map(|&(team, id)| Member::key(team, id).unwrap())
    };
    let task_keys = || keys.iter().map(|&(team, id)| Task::key(team, id).unwrap());
    let (members, tasks) = futures::join!(
        db.batch_get(member_keys()).send(),
        db.batch_get(task_keys()).send()
    );
    let (mut members, mut tasks) = (members.unwrap(), tasks.unwrap());
    assert!(members.is_complete() && tasks.is_complete());
    members.items.sort_by_key(|member| (member.team, member.id));
    tasks.items.sort_by_key(|task| (task.team, task.id));
    let live_members: Vec<&Member> = (model.members.values())
        .filter(|member| live(member.expires_at, now))
        .collect();
    let live_tasks: Vec<&Task> = (model.tasks.values())
        .filter(|task| live(task.expires_at, now))
        .collect();
    assert_eq!(members.items.iter().collect::<Vec<_>>(), live_members);
    assert_eq!(tasks.items.iter().collect::<Vec<_>>(), live_tasks);
    // The same keys, and every note's and one note that is not there, in one batch read of
    // the collection: each live item as its variant, whatever its entity.
    let note_keys: Vec<(u8, u8)> = model.notes.keys().copied().chain([(0, u8::MAX)]).collect();
    let mixed = (member_keys().fold(db.batch_get_collection::<TeamItem>(), |read, key| {
        read.key(key)
    }))
    .keys(std::iter::empty());
    let mixed = task_keys().fold(mixed, |read, key| read.key(key));
    let mixed = (note_keys.iter()).fold(mixed, |read, &(team, seq)| {
        read.key(Note::key(team, seq).unwrap())
    });
    let mixed = mixed.send().await.unwrap();
    assert!(mixed.is_complete(), "{:?}", mixed.unprocessed);
    let mut read: Vec<String> = mixed.items.iter().map(|item| format!("{item:?}")).collect();
    let mut expected: Vec<String> = (0..TEAMS)
        .flat_map(|team| model.partition(team))
        .map(|item| format!("{item:?}"))
        .collect();
    read.sort();
    expected.sort();
    assert_eq!(read, expected, "one batch read of members, tasks and notes");
    let mut get = db.transact_get();
    let slots: Vec<_> = (member_keys().zip(task_keys()))
        .map(|(member, task)| (get.get(member), get.get(task)))
        .collect();
    let mut got = get.send().await.unwrap();
    for (key, (member, task)) in keys.iter().zip(slots) {
        assert_eq!(got.take(&member).unwrap().as_ref(), model.live_member(*key));
        assert_eq!(got.take(&task).unwrap().as_ref(), model.live_task(*key));
    }
    let scanned = db.scan::<Member>().all().await.unwrap();
    assert_eq!(scanned.len(), live_members.len(), "members scanned");
    for team in 0..TEAMS {
        // The partition as a collection, from any of its entities: its entities' sort keys
        // share no prefix (`MEMBER#`, `Note#`, `TASK#`), so it is the whole partition, every
        // live member, note and task in sort key order, decoded, and nothing of the library's
        // (the log's pointer).
        let expected = model.partition(team);
        for items in [
            db.query(Member::partition(team))
                .collection::<TeamItem>()
                .all()
                .await
                .unwrap(),
            db.query(Task::partition(team))
                .collection::<TeamItem>()
                .all()
                .await
                .unwrap(),
        ] {
            assert_eq!(items, expected, "team {team}'s partition");
        }
        // Page by page through cursors, as a service hands them to its clients: the same items,
        // although pages come back short or empty where an expired item was evaluated.
        let members = db.query(Member::partition(team)).collection::<TeamItem>();
        let members = members.all().await.unwrap();
        let one_by_one = walk(|cursor| {
            // The first page before the rotation, the rest after it.
            let on = if cursor.is_none() { &sealed } else { &rotated };
            let page = on
                .query(Member::partition(team))
                .collection::<TeamItem>()
                .limit(1);
            async move { page.page(cursor.as_ref()).await }
        });
        assert_eq!(
            one_by_one.await,
            members,
            "team {team}'s partition, a page at a time, across a rotation of the cursor secret"
        );
        let two_by_two = walk(|cursor| {
            let page = sealed
                .query(Member::partition(team))
                .collection::<TeamItem>();
            async move { page.full_page(2, cursor.as_ref()).await }
        });
        assert_eq!(
            two_by_two.await,
            members,
            "team {team}'s partition, two at a time"
        );
        // The inverted index, whose keys are the table's: the live members of one id, by
        // team, and nothing of the tasks, notes or library records it also holds.
        let id = team;
        let across: Vec<&Member> = (model.members.iter())
            .filter(|(key, m)| key.1 == id && live(m.expires_at, now))
            .map(|(_, m)| m)
            .collect();
        let inverted = db.query(Member::gsi5(id)).all().await.unwrap();
        assert_eq!(
            inverted.iter().collect::<Vec<_>>(),
            across,
            "members {id} by team"
        );
        // The sparse index holds the open tasks, and only them.
        let open: Vec<u8> = db
            .query(Task::gsi1(team))
            .all()
            .await
            .unwrap()
            .into_iter()
            .map(|t: Task| t.id)
            .collect();
        let expected: Vec<u8> = model
            .tasks
            .iter()
            .filter(|(k, t)| k.0 == team && t.open && live(t.expires_at, now))
            .map(|(k, _)| k.1)
            .collect();
        assert_eq!(open, expected, "open tasks of team {team}");
        // The sparse index's team partition is sharded: each page merges the four shards, in
        // both directions, a page's cursor holding every shard's place (sealed, across a
        // rotation of the secret), the shards' items not on a page read again on the next; and
        // counted over every shard.
        for (descending, size) in [(false, 1), (true, 2)] {
            let pages = walk(|cursor| {
                let on = if cursor.is_none() { &sealed } else { &rotated };
                let query = on.query(Task::gsi1(team)).limit(size);
                let query = if descending {
                    query.descending()
                } else {
                    query
                };
                async move { query.page(cursor.as_ref()).await }
            });
            let mut paged: Vec<u8> = pages.await.into_iter().map(|t: Task| t.id).collect();
            if descending {
                paged.reverse();
            }
            assert_eq!(
                paged, expected,
                "open tasks of team {team}, two a page, descending: {descending}"
            );
        }
        let counted = db.query(Task::gsi1(team)).count().await.unwrap();
        assert_eq!(
            counted,
            expected.len() as u64,
            "open tasks of team {team}, counted"
        );
        // The INCLUDE index: every live task's title, and no expired one (it projects the TTL).
        let titles: Vec<(String, String)> = db
            .query(Task::gsi3(team))
            .select::<TaskTitle>()
            .all()
            .await
            .unwrap()
            .into_iter()
            .map(|entry: IndexEntry<Task, TaskTitle>| {
                (
                    entry.key.sort().unwrap_or_default().to_owned(),
                    entry.value.title,
                )
            })
            .collect();
        let expected: Vec<(String, String)> = model
            .tasks
            .iter()
            .filter(|(k, t)| k.0 == team && live(t.expires_at, now))
            .map(|(k, t)| {
                let key = Task::key(k.0, k.1).unwrap();
                (key.sort().unwrap_or_default().to_owned(), t.title.clone())
            })
            .collect();
        assert_eq!(titles, expected, "titles of team {team}");
        // Version 2's index, once created: the live tasks of version 2, backfilled or written
        // by the new code, by owner (those written before it was created included); none
        // that version 1 wrote.
        if !model.indexed {
            continue;
        }
        let by_owner: Vec<(u8, u8)> = db
            .query(Task::gsi4(team))
            .all()
            .await
            .unwrap()
            .into_iter()
            .map(|t: Task| (t.owner, t.id))
            .collect();
        let mut expected: Vec<(u8, u8)> = model
            .tasks
            .iter()
            .filter(|(k, t)| k.0 == team && live(t.expires_at, now) && !model.old_tasks.contains(k))
            .map(|(k, t)| (t.owner, k.1))
            .collect();
        expected.sort();
        assert_eq!(by_owner, expected, "team {team}'s tasks by owner");
    }
    // Coverage counts every stored task (an expired one too, until DynamoDB deletes it) and
    // those version 1 wrote.
    let coverage = db.admin().coverage(Task::SCHEMA).send().await.unwrap();
    assert_eq!(
        (coverage.items, coverage.behind),
        (model.tasks.len() as u64, model.old_tasks.len() as u64),
        "{coverage}"
    );
    for owner in 0..OWNERS {
        let query = db.query(Task::gsi2(owner));
        let entries: Vec<IndexEntry<Task>> = query.all().await.unwrap();
        let expected: BTreeSet<(u8, u8)> = model
            .tasks
            .iter()
            .filter(|(_, t)| t.owner == owner && live(t.expires_at, now))
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(
            entries.len(),
            expected.len(),
            "owner {owner}'s keys-only entries"
        );
        assert_eq!(
            db.query(Task::gsi2(owner)).count().await.unwrap(),
            expected.len() as u64,
            "owner {owner}'s count"
        );
        let hydrated = db.query(Task::gsi2(owner)).hydrate().all().await.unwrap();
        let found: BTreeSet<(u8, u8)> = hydrated.items.iter().map(|t| (t.team, t.id)).collect();
        assert_eq!(found, expected, "owner {owner} hydrated: {hydrated:?}");
        let one_by_one = walk(|cursor| {
            let page = sealed.query(Task::gsi2(owner)).limit(1).hydrate();
            async move {
                let hydrated = page.page(cursor.as_ref()).await?;
                assert!(hydrated.errors.is_empty(), "{:?}", hydrated.errors);
                Ok(Page {
                    items: hydrated.items,
                    errors: Vec::new(),
                    cursor: hydrated.cursor,
                })
            }
        });
        assert_eq!(
            one_by_one.await,
            hydrated.items,
            "owner {owner} hydrated, a page at a time"
        );
    }
    for team in 0..TEAMS {
        let notes = db.query(Note::partition(team)).all().await.unwrap();
        let expected: Vec<&Note> = model
            .notes
            .iter()
            .filter(|(k, _)| k.0 == team)
            .map(|(_, n)| n)
            .collect();
        assert_eq!(
            notes.iter().collect::<Vec<_>>(),
            expected,
            "team {team}'s notes"
        );
        // The log as a collection is the whole partition, which holds the log's pointer
        // too: its pages and its count leave the pointer out.
        let log = || db.query(Note::partition(team)).collection::<TeamItem>();
        let items = log().all().await.unwrap();
        assert_eq!(items, model.partition(team), "team {team}'s partition");
        let notes: Vec<&Note> = items
            .iter()
            .filter_map(|item| match item {
                TeamItem::Note(note) => Some(note),
                _ => None,
            })
            .collect();
        assert_eq!(notes, expected, "team {team}'s log as a collection");
        assert_eq!(log().count().await.unwrap(), items.len() as u64);
        let one_by_one = walk(|cursor| {
            let page = sealed
                .query(Note::partition(team))
                .collection::<TeamItem>()
                .limit(1);
            async move { page.page(cursor.as_ref()).await }
        });
        assert_eq!(
            one_by_one.await,
            items,
            "team {team}'s partition from the log, a page at a time"
        );
        let latest = db.latest(Note::partition(team), Note::SEQ).await.unwrap();
        assert_eq!(
            latest,
            expected.last().map(|note| note.seq),
            "team {team}'s latest note"
        );
    }
    let tasks = db.scan::<Task>().all().await.unwrap();
    assert_eq!(
        tasks.len(),
        model
            .tasks
            .values()
            .filter(|t| live(t.expires_at, now))
            .count()
    );
    // Each live member is found by each of its unique values.
    for member in model.members.values().filter(|m| live(m.expires_at, now)) {
        let found = db
            .get_by_unique(Member::EMAIL, member.email.clone())
            .await
            .unwrap();
        assert_eq!(&found, member);
    }
    // The raw table: the library's records say whose they are, and each live member has a
    // sentinel per unique value (its email, its nickname in the team), each carrying the
    // member's expiry.
    let mut sentinels: BTreeMap<(u8, u8), Vec<Option<u64>>> = BTreeMap::new();
    for item in common::raw_items(db).await {
        let pk = text(&item, "PK").unwrap_or_default();
        assert!(
            text(&item, "_type").is_some(),
            "an item without its entity attribute: {item:?}"
        );
        if !pk.starts_with("_UNIQUE#") {
            continue;
        }
        let owner = (text(&item, "owner_pk"), text(&item, "owner_sk"));
        let holder = model.members.values().find(|m| {
            let key = Member::key(m.team, m.id).unwrap();
            owner
                == (
                    Some(key.partition().to_owned()),
                    key.sort().map(str::to_owned),
                )
        });
        if let Some(holder) = holder.filter(|m| live(m.expires_at, now)) {
            let expiry = item.get("expires_at").map(|value| match value {
                AttributeValue::N(n) => n.parse::<u64>().unwrap(),
                other => panic!("{other:?}"),
            });
            sentinels
                .entry((holder.team, holder.id))
                .or_default()
                .push(expiry);
        }
    }
    for member in model.members.values().filter(|m| live(m.expires_at, now)) {
        let expiries = sentinels
            .remove(&(member.team, member.id))
            .unwrap_or_default();
        assert_eq!(
            expiries, [member.expires_at; 2],
            "the sentinels of {member:?} follow its expiry"
        );
    }
}

/// Whether a task read through a lagging read is one of its `recent` versions. A step that
/// counts twice passes through a count no model holds; counts only rise, so one between
/// the recent ones is a version too, and so is one from its creation up, for a task a recent
/// model did not hold yet (a count that creates it at 1, then counts it again).
fn a_recent_task(recent: &[Option<&Task>], seen: Option<&Task>) -> bool {
    let Some(seen) = seen else {
        return recent.contains(&None);
    };
    let counted = |task: &Task| Task {
        hits: 0,
        ..task.clone()
    };
    let hits = recent.iter().flatten().map(|task| task.hits);
    let low = match hits.clone().min() {
        Some(_) if recent.contains(&None) => Some(0),
        low => low,
    };
    let high = hits.max();
    (recent.iter().flatten()).any(|version| counted(version) == counted(seen))
        && low.is_some_and(|low| low <= seen.hits)
        && high.is_some_and(|high| seen.hits <= high)
}

/// Right after a step, with indexes and eventually consistent reads lagging: each member and
/// task read, each open task on the sparse index, each member on the inverted index and each
/// task hydrated through the keys-only index is a version of it that one of the `recent`
/// models held (or its absence, for an item missed), never one older than those.
async fn check_lagging(db: &Db<Together>, model: &Model, recent: &[(Instant, Model)]) {
    let now = model.now;
    let members = |key: (u8, u8)| -> Vec<Option<&Member>> {
        (recent.iter())
            .map(|(_, m)| m.members.get(&key).filter(|m| live(m.expires_at, now)))
            .collect()
    };
    let tasks = |key: (u8, u8)| -> Vec<Option<&Task>> {
        (recent.iter())
            .map(|(_, m)| m.tasks.get(&key).filter(|t| live(t.expires_at, now)))
            .collect()
    };
    for team in 0..TEAMS {
        for id in 0..IDS + 3 {
            let key = (team, id);
            let member = db.get(Member::key(team, id).unwrap()).send().await;
            let member = member.optional().unwrap();
            assert!(
                members(key).contains(&member.as_ref()),
                "member {key:?} read as {member:?}, none of {:?}",
                members(key)
            );
            let task = db.get(Task::key(team, id).unwrap()).send().await;
            let task = task.optional().unwrap();
            assert!(
                a_recent_task(&tasks(key), task.as_ref()),
                "task {key:?} read as {task:?}, none of {:?}",
                tasks(key)
            );
        }
        let open: Vec<Task> = db.query(Task::gsi1(team)).all().await.unwrap();
        for task in &open {
            assert!(
                task.open && a_recent_task(&tasks((team, task.id)), Some(task)),
                "{task:?} on the open tasks' index of team {team}, a version no recent model held open"
            );
        }
        // An open task missing from the index was closed, or absent, in a recent model.
        for (key, _) in model.tasks.iter().filter(|(k, t)| k.0 == team && t.open) {
            if !open.iter().any(|task| task.id == key.1) {
                assert!(
                    (tasks(*key).iter()).any(|version| version.is_none_or(|t| !t.open)),
                    "open task {key:?} missing from the index, open in every recent model"
                );
            }
        }
        let id = team;
        for member in db.query(Member::gsi5(id)).all().await.unwrap() {
            assert!(
                members((member.team, id)).contains(&Some(&member)),
                "{member:?} on the inverted index, a version no recent model held"
            );
        }
    }
    for owner in 0..OWNERS {
        // The index as it lags, the items as they are now (strongly consistent): whatever
        // the index still lists, an item hydrated is the owner's now; one that moved to
        // another owner is reported as moved.
        let hydrated = (db.query(Task::gsi2(owner)).hydrate().consistent().all())
            .await
            .unwrap();
        for task in &hydrated.moved {
            assert_ne!(
                task.owner, owner,
                "{task:?} reported moved from owner {owner}"
            );
        }
        for task in &hydrated.items {
            assert_eq!(task.owner, owner, "{task:?} hydrated for owner {owner}");
            assert!(
                a_recent_task(&tasks((task.team, task.id)), Some(task)),
                "{task:?} hydrated for owner {owner}, a version no recent model held"
            );
        }
    }
}

/// Which item a collection's item is: its entity and key fields.
fn identity(item: &TeamItem) -> (&'static str, u8, u8) {
    match item {
        TeamItem::Member(member) => ("Member", member.team, member.id),
        TeamItem::Task(task) => ("Task", task.team, task.id),
        TeamItem::Note(note) => ("Note", note.team, note.seq),
    }
}

/// Every item of a query, page after page from `page` (given the cursor the last page ended
/// with), each cursor handed out as text and read back as a client would.
async fn walk<D, F>(mut page: impl FnMut(Option<Cursor>) -> F) -> Vec<D>
where
    F: std::future::Future<Output = Result<Page<D>, Error>>,
{
    let mut items = Vec::new();
    let mut cursor = None;
    for _ in 0..100 {
        let next = page(cursor.take()).await.unwrap();
        assert!(next.errors.is_empty(), "{:?}", next.errors);
        items.extend(next.items);
        match next.cursor {
            None => return items,
            Some(next) => cursor = Some(Cursor::decode(&next.encode()).unwrap()),
        }
    }
    panic!("a query of a few items went on for 100 pages");
}

/// Drains the stream, as the reader's docs loop does, and replays its changes: every record
/// is a user entity's and decodes, and the items they leave are the model's, expired ones
/// included (the engine deletes none during a case: the clock runs ahead of real time). Under
/// the run's conditions, as its steps were: a poll or a commit refused or lost after every
/// resend is polled on (the reader keeps its place, and a later commit saves a later one).
async fn drain(db: &Db<Together>, model: &Model, proxy: &FaultStats) -> usize {
    use singletable::stream::Change;
    // Through the recording proxy too, so the policy's stream statements are checked.
    let config = singletable::local::sdk_config().await.unwrap();
    let config = aws_sdk_dynamodbstreams::config::Builder::from(&config)
        .endpoint_url(proxy.endpoint())
        .build();
    let client = aws_sdk_dynamodbstreams::Client::from_conf(config);
    let mut reader = db.admin().stream_reader("together", client);
    let mut replayed: BTreeMap<(&'static str, u8, u8), TeamItem> = BTreeMap::new();
    let mut records = 0;
    let mut interrupted = 0;
    let mut interruption = |error: Error| {
        interrupted += 1;
        assert!(refused(&error) || lost(&error), "{error:?}");
        assert!(
            interrupted <= 40,
            "the stream's reads interrupted {interrupted} times"
        );
    };
    loop {
        let batch = match reader.poll::<TeamItem>().await {
            Ok(batch) => batch,
            Err(error) => {
                interruption(error);
                continue;
            }
        };
        let caught_up = batch.is_empty() && reader.is_caught_up();
        if let Err(error) = reader.commit(&batch).await {
            interruption(error);
        }
        for record in batch.into_records() {
            match record.expect("a user entity's record that decodes").change {
                Change::Insert { new } | Change::Modify { new, .. } => {
                    replayed.insert(identity(&new), new);
                }
                Change::Remove { old, expired } => {
                    assert!(!expired, "no time-to-live deletion during a case: {old:?}");
                    replayed.remove(&identity(&old));
                }
            }
            records += 1;
        }
        if caught_up {
            break;
        }
    }
    let expected: BTreeMap<(&'static str, u8, u8), TeamItem> = (model.members.values())
        .map(|m| TeamItem::Member(m.clone()))
        .chain(model.tasks.values().map(|t| TeamItem::Task(t.clone())))
        .chain(model.notes.values().map(|n| TeamItem::Note(n.clone())))
        .map(|item| (identity(&item), item))
        .collect();
    assert_eq!(replayed, expected, "the stream's changes replayed");
    records
}

/// The table, the client through the recording proxy, the clock, and the model that judges
/// what the engine returns.
struct Run {
    table: singletable::testing::TestTable<TogetherBefore>,
    /// The steps' requests, under the user's retry policy (`STEP_ATTEMPTS`).
    db: Db<Together>,
    /// The long jobs' (sweeps, the claim sweep, a migration's apply): the same table with no
    /// policy of the user's, so that they ride through what the conditions refuse.
    jobs: Db<Together>,
    clock: Arc<Clock>,
    model: Model,
    proxy: FaultStats,
    written: bool,
    /// Requests the steps sent (the checks' excluded): those the conditions could fault.
    step_requests: u64,
    /// The model after each recent step, and when that step ended: what a lagging read may
    /// still see.
    history: Vec<(Instant, Model)>,
    /// Steps applied.
    steps: usize,
}

/// The generator of steps. Which step may come next does not depend on the state, and the
/// model cannot be advanced apart from the engine: concurrent steps (racing puts, a sweep
/// beside writes) have outcomes only the engine decides, so the model lives with the system
/// under test and is updated from what each step returned, then compared after every step.
struct Steps;

impl ReferenceStateMachine for Steps {
    type State = ();
    type Transition = Step;

    fn init_state() -> BoxedStrategy<()> {
        Just(()).boxed()
    }

    fn transitions(_: &()) -> BoxedStrategy<Step> {
        step().boxed()
    }

    fn apply(state: (), _: &Step) {
        state
    }
}

/// The attempts the steps' `Db` allows each request: fewer than the default's three, so that a
/// request sent under another policy than the user's shows in its span's attempts.
const STEP_ATTEMPTS: u32 = 2;

/// The retry policy the user gives the steps' `Db`.
fn step_policy() -> RetryPolicy {
    RetryPolicy::default()
        .with_max_attempts(STEP_ATTEMPTS)
        .with_base_delay(Duration::from_millis(5))
}

/// The spans of every request of this test binary (one global subscriber: the runs of the
/// three conditions go on side by side), installed at the first run.
fn spans() -> &'static Capture {
    static SPANS: OnceLock<Capture> = OnceLock::new();
    SPANS.get_or_init(|| {
        use tracing_subscriber::layer::SubscriberExt;
        let capture = Capture::default();
        let subscriber = tracing_subscriber::registry().with(capture.clone());
        tracing::subscriber::set_global_default(subscriber).unwrap();
        capture
    })
}

/// Every request the step sent to `table` (`sent`, counted at the proxy) was sent inside a
/// span that counted it, and each of the step's operations' requests was attempted at most
/// as often as the user's policy allows, the SDK's own attempts counted. The long jobs'
/// requests (on the jobs' `Db`, under no policy of the user's: their item requests' spans
/// hold keys; the steps send no scan and no table request) are not held to the policy.
fn within_the_policy(table: &str, step: &Step, sent: u64) {
    let mut counted = 0;
    for span in spans().take_table(table) {
        let operation = field(&span, "db.operation.name");
        let Some(attempts) = span.fields.get("singletable.attempts") else {
            continue;
        };
        let attempts: u32 = attempts.parse().unwrap();
        counted += u64::from(attempts);
        let jobs_only = [
            "Scan",
            "DescribeTable",
            "DescribeTimeToLive",
            "UpdateTable",
            "ListTagsOfResource",
            "DescribeContinuousBackups",
        ];
        if span.fields.contains_key("singletable.key") || jobs_only.contains(&operation) {
            continue;
        }
        assert!(
            attempts <= STEP_ATTEMPTS,
            "{step:?}: {operation} attempted {attempts} times under a policy of \
             {STEP_ATTEMPTS}: {span:#?}"
        );
    }
    assert_eq!(
        counted, sent,
        "{step:?}: the requests its spans counted, and those sent"
    );
}

/// The run, under `C`: what the proxy does to the steps' requests (the checks after each
/// step go through with it paused).
struct FeaturesTogether<C>(std::marker::PhantomData<C>);

/// What the proxy does to the steps' requests in one run.
trait Conditions {
    /// The proxy's plan for the run with `seed`.
    fn plan(seed: u64) -> FaultPlan;
}

/// Every request as the engine answers it.
struct AsAnswered;

impl Conditions for AsAnswered {
    fn plan(_: u64) -> FaultPlan {
        FaultPlan::new(0, 0.0).without_idempotency_emulation()
    }
}

/// DynamoDB refusing half of the steps' requests as it may at any time: throttling
/// (`ProvisionedThroughputExceededException`, `ThrottlingException`), transaction conflicts,
/// unprocessed batch parts and the Streams API's read limit (`LimitExceededException`), each
/// of which DynamoDB documents as applying nothing. The SDK
/// and the library resend them; a write still refused after every retry must say so
/// (`is_throttling()`, or a transaction cancelled by conflicts) and leave the table as it
/// was. The SDK's three attempts are all refused for one request in eight, so steps are
/// refused whole often (27 times in 20 sequences, measured), while the library's own resends
/// (8 attempts for a transaction, 24 for a sweep's) get almost every one through.
struct Refusals;

impl Conditions for Refusals {
    fn plan(seed: u64) -> FaultPlan {
        FaultPlan::new(seed, 0.5)
            .with_kinds([
                Fault::before(FaultKind::Throttling),
                Fault::before(FaultKind::ProvisionedThroughputExceeded),
                Fault::before(FaultKind::TransactionConflict),
                Fault::before(FaultKind::Unprocessed),
                Fault::before(FaultKind::LimitExceeded),
            ])
            .without_idempotency_emulation()
    }
}

/// A fifth of the steps' requests losing their response, mostly after the engine applied
/// them (a dropped connection, HTTP 500), or failing with HTTP 503 before. The SDK resends
/// them, and the library its transactions (with their token: DynamoDB's answer is emulated
/// on an engine that ignores tokens) and its own writes: every write must be applied once.
/// One whose outcome stays unknown after every resend must say so (`Error::Service` with no
/// response, `Ambiguous`, `AmbiguousTransaction`, `Unread`), and its items are read back.
struct LostResponses;

impl Conditions for LostResponses {
    fn plan(seed: u64) -> FaultPlan {
        FaultPlan::new(seed, 0.2).with_kinds([
            Fault::after(FaultKind::ConnectionDropped),
            Fault::after(FaultKind::InternalServerError),
            Fault::before(FaultKind::ServiceUnavailable),
        ])
    }
}

/// Global indexes and eventually consistent reads up to [`INDEX_LAG`] behind the table, as
/// DynamoDB's may be; no faults. The library's own reads of what it wrote must not be fooled,
/// and a read right after a step may miss or show an older version of an item written within
/// the lag, never one older than that ([`check_lagging`]); once the lag has passed the table
/// must match the model exactly.
struct Lagging;

impl Conditions for Lagging {
    fn plan(seed: u64) -> FaultPlan {
        FaultPlan::new(seed, 0.0)
            .with_index_lag(IndexLag::up_to(INDEX_LAG))
            .without_idempotency_emulation()
    }
}

/// The longest lag of [`Lagging`].
const INDEX_LAG: Duration = Duration::from_millis(300);
/// How often [`Lagging`] waits for the lag to pass and checks the model exactly: every third
/// step, and at the end.
const EXACT_EVERY: usize = 3;
/// How much later than [`INDEX_LAG`] a loaded machine may deliver a write to the replica: a
/// model that ended this long before the lag is no longer what a read may see.
const LAG_MARGIN: Duration = Duration::from_millis(400);

/// The seeds of the runs' fault schedules, one per sequence.
static SEEDS: AtomicU64 = AtomicU64::new(1);

impl<C: Conditions> StateMachineTest for FeaturesTogether<C> {
    type SystemUnderTest = Run;
    type Reference = Steps;

    fn init_test(_: &()) -> Run {
        runtime().block_on(async {
            let table = singletable::testing::table::<TogetherBefore>()
                .await
                .unwrap();
            // Every request goes through a proxy that records it, so that the IAM policy
            // generated for the table is checked against all of them.
            let plan = C::plan(SEEDS.fetch_add(1, Ordering::SeqCst))
                .recording()
                .with_attempt_timeout(Duration::from_secs(30));
            let (client, proxy) = singletable_fault::client(plan).await.unwrap();
            // Refusals only while a step runs.
            proxy.set_paused(true);
            let clock = Arc::new(Clock::started());
            let reading = clock.clone();
            let db = Db::<Together>::new(client)
                .with_table_name(table.table_name())
                .with_clock(move || UNIX_EPOCH + Duration::from_secs(reading.now()));
            // The jobs' spans record their keys, which tells them from the steps'.
            let jobs = db.clone().trace_values();
            let db = db.with_retry_policy(step_policy());
            // The spans of every request, to hold each to the policy's attempts.
            spans();
            Run {
                table,
                db,
                jobs,
                clock,
                model: Model::default(),
                proxy,
                written: false,
                step_requests: 0,
                history: vec![(Instant::now(), Model::default())],
                steps: 0,
            }
        })
    }

    fn apply(mut run: Run, _: &(), step: Step) -> Run {
        // The checks' spans since the last step: their requests are not this step's.
        spans().take_table(run.table.table_name());
        let before = run.proxy.report().requests;
        run.proxy.set_paused(false);
        let resync = runtime().block_on(apply(
            (&run.db, &run.jobs),
            &run.clock,
            &mut run.model,
            &step,
        ));
        run.proxy.set_paused(true);
        let sent = run.proxy.report().requests - before;
        within_the_policy(run.table.table_name(), &step, sent);
        run.step_requests += sent;
        runtime().block_on(resync.read_into(&run.db, &mut run.model));
        run.written |= !matches!(step, Step::Advance { .. });
        run.steps += 1;
        if C::plan(0).index_lag.is_some() {
            let now = Instant::now();
            run.history.push((now, run.model.clone()));
            // The models of the window, and the last one before it: what the table was when
            // the window began.
            while run.history.len() > 1
                && now.duration_since(run.history[1].0) >= INDEX_LAG + LAG_MARGIN
            {
                run.history.remove(0);
            }
        }
        run
    }

    fn check_invariants(run: &Run, _: &()) {
        runtime().block_on(async {
            if C::plan(0).index_lag.is_some() {
                // Right after the step, within the lag: every version seen is one the model
                // held recently. Every few steps, the lag passed, exactly the model; the
                // steps between start with the indexes behind.
                check_lagging(&run.db, &run.model, &run.history).await;
                if !run.steps.is_multiple_of(EXACT_EVERY) {
                    return;
                }
                run.proxy.caught_up().await;
            }
            check(&run.db, &run.model).await;
        });
    }

    fn teardown(run: Run, _: ()) {
        runtime().block_on(async {
            run.proxy.caught_up().await;
            check(&run.db, &run.model).await;
        });
        run.proxy.set_paused(false);
        let records = runtime().block_on(drain(&run.db, &run.model, &run.proxy));
        run.proxy.set_paused(true);
        let empty = run.model.members.is_empty() && run.model.tasks.is_empty();
        assert!(!run.written || records > 0 || empty);
        allowed_by_the_generated_policy(run.table.table_name(), &run.proxy);
        runtime().block_on(exported_model_states_the_live_table(&run.db));
        // A run under faults whose steps sent enough requests to draw a fault all but surely
        // (a chance of a billion to one of none) injected some: it did not pass untouched.
        let rate = C::plan(0).rate;
        if rate > 0.0 {
            let surely = (1e-9_f64.ln() / (1.0 - rate).ln()).ceil() as u64;
            let injected = run.proxy.report().injected_total();
            assert!(
                run.step_requests < surely || injected > 0,
                "{} step requests at a rate of {rate}, and no fault injected",
                run.step_requests
            );
        }
    }
}

/// The table as a NoSQL Workbench model states the table the run made and migrated: a facet
/// per entity with its templates as key aliases, and every index the live table has, with the
/// same keys, key types and projection (the code may declare one more, the migration's, that a
/// run which never applied it lacks).
async fn exported_model_states_the_live_table(db: &Db<Together>) {
    use singletable::workbench::format::Model;
    let json = (db.admin().workbench_model())
        .entity::<Member>()
        .entity::<Task>()
        .entity::<Note>()
        .to_json()
        .unwrap();
    let model: Model = serde_json::from_str(&json).unwrap();
    let table = &model.data_model[0];
    let aliases: Vec<(&str, &str, Option<&str>)> = (table.table_facets.iter())
        .map(|facet| {
            let alias = &facet.key_attribute_alias;
            let sort = alias.sort_key_alias.as_deref();
            (
                facet.facet_name.as_str(),
                alias.partition_key_alias.as_str(),
                sort,
            )
        })
        .collect();
    assert_eq!(
        aliases,
        [
            ("Member", "TEAM#team", Some("MEMBER#id")),
            ("Task", "TEAM#team", Some("TASK#id")),
            ("Note", "TEAM#team", Some("Note#seq")),
        ]
    );
    let described = db
        .client()
        .describe_table()
        .table_name(db.table_name())
        .send()
        .await
        .unwrap();
    let live = described.table().unwrap();
    let type_of = |name: &str| {
        (live.attribute_definitions().iter())
            .find(|definition| definition.attribute_name() == name)
            .map(|definition| definition.attribute_type().as_str().to_owned())
    };
    for index in live.global_secondary_indexes() {
        let name = index.index_name().unwrap();
        let exported = (table.global_secondary_indexes.iter())
            .find(|exported| exported.index_name == name)
            .unwrap_or_else(|| panic!("index {name} is not in the exported model"));
        for key in index.key_schema() {
            let stated = match key.key_type() {
                aws_sdk_dynamodb::types::KeyType::Hash => {
                    Some(&exported.key_attributes.partition_key)
                }
                _ => exported.key_attributes.sort_key.as_ref(),
            };
            let stated = stated.unwrap_or_else(|| panic!("{name}: {key:?} is not stated"));
            assert_eq!(stated.attribute_name, key.attribute_name(), "{name}");
            assert_eq!(
                Some(stated.attribute_type.clone()),
                type_of(key.attribute_name()),
                "{name}"
            );
        }
        let projection = index.projection().unwrap();
        let kind = projection.projection_type().unwrap().as_str();
        assert_eq!(
            exported.projection.projection_type, kind,
            "{name}'s projection"
        );
        let mut attributes: Vec<&str> = projection
            .non_key_attributes()
            .iter()
            .map(String::as_str)
            .collect();
        let mut stated: Vec<&str> = exported
            .projection
            .non_key_attributes
            .iter()
            .map(String::as_str)
            .collect();
        attributes.sort_unstable();
        stated.sort_unstable();
        assert_eq!(stated, attributes, "{name}'s projected attributes");
    }
}

/// Every request of the run, as IAM would authorize it, is allowed by the policy generated
/// for the table with its stream and its administration; and what the service role's policy
/// (without administration) denies is only the migration's: the table change that creates
/// the index, and the reading of the table's description and tags by it, the sweeps and
/// coverage.
fn allowed_by_the_generated_policy(table: &str, proxy: &FaultStats) {
    let (region, account) = ("eu-west-1", "123456789012");
    let arn = TableArn::new(region, account, table).unwrap();
    let service = IamPolicy::for_table::<Together>(arn).with_streams();
    let migrations = service.clone().with_administration();
    let requests = proxy.requests();
    assert!(requests
        .iter()
        .any(|request| request.operation == "GetRecords"));
    let needed: BTreeSet<_> = requests
        .iter()
        .flat_map(|request| request.authorizations(region, account, table))
        .collect();
    let denied = |policy: &IamPolicy| -> BTreeSet<String> {
        let document = serde_json::to_value(policy).unwrap();
        let denied = needed
            .iter()
            .filter(|need| !singletable_fault::allows(&document, need));
        denied.map(|need| need.action.clone()).collect()
    };
    assert_eq!(denied(&migrations), BTreeSet::new(), "{migrations}");
    let migration = [
        "dynamodb:DescribeTable",
        "dynamodb:DescribeTimeToLive",
        "dynamodb:UpdateTable",
        // Apply's reading of the table's tags (is a CloudFormation stack its owner?).
        "dynamodb:ListTagsOfResource",
        // Its plan's reading of point-in-time recovery, a setting it compares.
        "dynamodb:DescribeContinuousBackups",
    ];
    let migration = migration.map(String::from).into();
    assert!(denied(&service).is_subset(&migration), "{service}");
}

/// The number of sequences to run; none where the run cannot go through the recording proxy,
/// or where index reads lag the writes (the checks read every index after every step). Asked
/// once, so that a skip is reported once.
fn cases() -> u32 {
    static CASES: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *CASES.get_or_init(|| {
        if common::skips(Needs::FaultProxy) || common::skips(Needs::IndexReadAfterWrite) {
            return 0;
        }
        std::env::var("SINGLETABLE_MODEL_CASES")
            .ok()
            .and_then(|cases| cases.parse().ok())
            .unwrap_or(8)
    })
}

prop_state_machine! {
    #![proptest_config(ProptestConfig { cases: cases(), max_shrink_iters: 200, ..ProptestConfig::default() })]

    #[test]
    fn the_features_together_match_the_model(sequential 1..20 => FeaturesTogether<AsAnswered>);

    #[test]
    fn the_features_together_match_the_model_while_dynamodb_refuses_requests(sequential 1..20 => FeaturesTogether<Refusals>);

    #[test]
    fn the_features_together_match_the_model_while_responses_are_lost(sequential 1..20 => FeaturesTogether<LostResponses>);

    #[test]
    fn the_features_together_match_the_model_while_indexes_lag(sequential 1..20 => FeaturesTogether<Lagging>);
}

/// A member moved by a rekey keeps its nickname, so a later put of a new member may be refused
/// for the nickname rather than the email: a refusal is judged by the value it names (found
/// by CI's run under lost responses, where a refused `m0@example.com` was free).
#[test]
fn a_refusal_is_judged_by_the_value_it_names() {
    if cases() == 0 {
        return;
    }
    let steps = [
        Step::ConcurrentPuts {
            team: 1,
            emails: vec![0, 1],
        },
        // (1, IDS) to (1, 0), with a new email and its nickname `nick3`.
        Step::RekeyMember {
            which: 0,
            to: Some((1, 0)),
            email: Some(2),
            stale: false,
        },
        // (1, IDS) again, with the free `m0@example.com` and the held `nick3`.
        Step::ConcurrentPuts {
            team: 1,
            emails: vec![0, 2],
        },
    ];
    replay(steps);
}

/// An expired member, which DynamoDB still stores, is none to a transaction's condition check
/// and to a delete `only_if_exists`, as it is to reads: the model's random sequences meet this
/// only now and then.
/// A task counted into being twice in one step (`or_create`, then the count delivered again)
/// passes through one hit, which no model holds: a lagging read may still see it. (A run with
/// lagging reads met it: the task read at 1 hit, the models before the step without it, the
/// one after at 2.)
#[test]
fn a_lagging_read_may_see_a_task_counted_into_being_at_its_first_count() {
    let counted = |hits| Task {
        hits,
        ..task(0, 0, 0, true, "counted", None)
    };
    let (one, two, three) = (counted(1), counted(2), counted(3));
    assert!(a_recent_task(&[None, None, Some(&two)], Some(&one)));
    assert!(a_recent_task(&[None, Some(&two)], Some(&two)));
    // Never past the newest count, nor below the oldest a model held throughout.
    assert!(!a_recent_task(&[None, Some(&two)], Some(&three)));
    assert!(!a_recent_task(&[Some(&two), Some(&three)], Some(&one)));
}

#[test]
fn the_checks_see_an_expired_member_as_none() {
    if cases() == 0 {
        return;
    }
    let transact = |present| Step::Transact {
        team: 0,
        new: 2,
        retitle: 1,
        checked: Some((0, present)),
    };
    replay([
        Step::PutMember {
            team: 0,
            id: 0,
            email: 0,
            nick: 0,
            expires_in: Some(1),
            only_if_absent: false,
            stale: false,
        },
        Step::PutTask {
            team: 0,
            id: 1,
            owner: 0,
            open: true,
            expires_in: None,
            legacy: false,
            keys_only: false,
        },
        Step::Advance { seconds: 2 },
        // Cancelled: the member is expired, so not there.
        transact(true),
        // Applied: the member, expired, has no email.
        transact(false),
        Step::DeleteMember {
            team: 0,
            id: 0,
            only_if_exists: true,
        },
        Step::DeleteMember {
            team: 0,
            id: 0,
            only_if_exists: false,
        },
    ]);
}

/// Runs `steps` through the machine the random sequences run through, as answered, checking
/// the table against the model after each.
fn replay(steps: impl IntoIterator<Item = Step>) {
    type Machine = FeaturesTogether<AsAnswered>;
    let mut run = Machine::init_test(&());
    for step in steps {
        run = Machine::apply(run, &(), step);
        Machine::check_invariants(&run, &());
    }
    Machine::teardown(run, ());
}
