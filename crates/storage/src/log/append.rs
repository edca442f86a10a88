//! Appends (Kafka's `UnifiedLog.appendAsLeader` / `appendAsFollower`).
//!
//! Every batch of the buffer is checked before anything is written; a refused batch refuses the
//! whole append. Then each batch goes to the active segment, rolling first when it would not
//! fit (segment.bytes, segment.ms, a full index, a relative offset past i32::MAX), and epochs
//! greater than the latest cached one are recorded, and the batch is applied to the producer
//! state (an ABORT marker's transaction goes to the segment's `.txnindex`, txn.rs).
//!
//! An append is all or nothing, as in Kafka: if any write fails (a full disk), everything it
//! did is undone before the error is returned: segments it rolled are deleted, the `.log` of
//! the segment active before it is cut back to its old size, the index entries it added are
//! dropped (and a roll's index trim undone), the segment's size, max timestamp and bytes since
//! the last index entry are put back, and so are the LEO, the leader epochs (the
//! next flush writes the checkpoint), the producer state and the `.txnindex` entries (the snapshots of rolls it made
//! go with their segments). So no offset is ever handed out twice and no unacknowledged byte stays. Undoing
//! needs no free space; if it fails anyway the log goes offline (LOG_OFFLINE, Kafka's offline
//! log directory) until it is opened again, and opening recovers it.
use ferrolog_record::batch::{
    set_base_offset, set_partition_leader_epoch, update_crc, ATTRIBUTES_OFFSET,
    MAX_TIMESTAMP_OFFSET, NO_TIMESTAMP, TIMESTAMP_TYPE_MASK,
};
use ferrolog_record::{
    validate_records_bounded, BatchHeader, BatchIter, RecordError, RecordLimits, TimestampChecks,
};

use super::{now_ms, Log};
use crate::config::TimestampType;
use crate::error::{Result, StorageError};
use crate::file_batches::last_offset_of;
use crate::leader_epoch::EpochEntry;
use crate::segment::SegmentMark;

/// Kafka's `AppendOrigin` of a leader append: a client's batches may not be control batches,
/// the transaction coordinator's markers are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendOrigin {
    Client,
    Coordinator,
}

/// Kafka's `LogAppendInfo`, reduced to what the broker uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogAppendInfo {
    /// -1 when nothing was appended.
    pub first_offset: i64,
    pub last_offset: i64,
    pub max_timestamp: i64,
    /// The lastOffset of the first batch holding max_timestamp.
    pub offset_of_max_timestamp: i64,
    /// The time stamped on LogAppendTime batches, else -1.
    pub log_append_time: i64,
    pub log_start_offset: i64,
    pub record_count: u32,
    pub batch_count: u32,
    pub valid_bytes: u32,
}

/// A checked batch of the buffer: where it starts and its header (as it will be written).
struct Checked {
    position: usize,
    header: BatchHeader,
}

/// What the leader's checks of a producer's batches take from the log (`Log::leader_checks`):
/// max.message.bytes, whether every record needs a key (a compacted log), the timestamp rules,
/// and the log's name for Kafka's messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderChecks {
    pub max_message_bytes: usize,
    pub key_required: bool,
    pub timestamp_type: TimestampType,
    /// message.timestamp.before.max.ms
    pub timestamp_before_max_ms: i64,
    /// message.timestamp.after.max.ms
    pub timestamp_after_max_ms: i64,
    /// "topic-partition", as Kafka's messages name the log (its directory's name).
    pub topic_partition: String,
}

impl LeaderChecks {
    /// The checks of a log that is not compacted, whose max.message.bytes is
    /// `max_message_bytes`, refusing no timestamp.
    pub fn max_message_bytes(max_message_bytes: usize) -> LeaderChecks {
        LeaderChecks {
            max_message_bytes,
            key_required: false,
            timestamp_type: TimestampType::CreateTime,
            timestamp_before_max_ms: i64::MAX,
            timestamp_after_max_ms: i64::MAX,
            topic_partition: String::new(),
        }
    }

    fn record_limits(&self, now_ms: i64) -> RecordLimits {
        RecordLimits::for_max_message_bytes(self.max_message_bytes)
            .with_key_required(self.key_required)
            .with_timestamps(TimestampChecks {
                create_time: self.timestamp_type == TimestampType::CreateTime,
                now_ms,
                before_max_ms: self.timestamp_before_max_ms,
                after_max_ms: self.timestamp_after_max_ms,
            })
    }
}

/// A producer's batches that passed the leader's checks (`LeaderBatches::check`), owned, for
/// `Log::append_checked_as_leader`. The checks need nothing of the log but its `LeaderChecks`,
/// so they may run without holding it: the binding's async append inflates compressed batches
/// on a worker thread while the log goes on serving reads, and holds the log only to write.
pub struct LeaderBatches {
    buf: Vec<u8>,
    checked: Vec<Checked>,
    checks: LeaderChecks,
}

impl LeaderBatches {
    /// The leader's checks of every batch (whole, CRC, not control unless from the coordinator,
    /// at most max.message.bytes, records within `RecordLimits::for_max_message_bytes`, judged
    /// as they inflate, then Kafka's LogValidator's per-record rules at `now_ms`: a key if the
    /// log is compacted, the timestamps), the first failure refusing them all; records that
    /// break a per-record rule are all named (`StorageError::RecordErrors`).
    pub fn check(batches: Vec<u8>, checks: LeaderChecks) -> Result<LeaderBatches> {
        LeaderBatches::check_from(batches, checks, AppendOrigin::Client, now_ms())
    }

    /// `check` of batches from `origin` at `now_ms`: the coordinator's may be control batches
    /// (markers).
    pub fn check_from(
        batches: Vec<u8>,
        checks: LeaderChecks,
        origin: AppendOrigin,
        now_ms: i64,
    ) -> Result<LeaderBatches> {
        let max = checks.max_message_bytes;
        let limits = checks.record_limits(now_ms);
        let mut checked = Vec::new();
        let mut iter = BatchIter::new(&batches);
        for item in iter.by_ref() {
            let (position, header) = item?;
            let size = header.size_in_bytes();
            if size > max {
                return Err(StorageError::RecordTooLarge { size, max });
            }
            let bytes = &batches[position..position + size];
            header.validate(bytes)?;
            if header.is_control() && origin == AppendOrigin::Client {
                return Err(StorageError::InvalidRecord(
                    "clients may not append control batches".into(),
                ));
            }
            validate_records_bounded(bytes, &header, &limits).map_err(|e| match e {
                RecordError::Violations(violations) => StorageError::RecordErrors {
                    topic_partition: checks.topic_partition.clone(),
                    violations,
                },
                e => StorageError::Record(e),
            })?;
            checked.push(Checked { position, header });
        }
        if iter.has_remainder() {
            return Err(StorageError::CorruptRecord(format!(
                "{} bytes after the last whole batch",
                batches.len() - iter.whole_bytes()
            )));
        }
        Ok(LeaderBatches {
            buf: batches,
            checked,
            checks,
        })
    }

    /// The batches as they were given to `check`.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

/// The log before an append, to undo it if it fails (`Log::rollback_append`).
struct AppendMark {
    log_end_offset: i64,
    active_base: i64,
    active: SegmentMark,
    epochs: Vec<EpochEntry>,
    /// A roll's flush not yet handed out: a roll this append makes and undoes must not hand out
    /// a flush up to a segment that is gone (the recovery point would pass data written after).
    roll_flush_upto: Option<i64>,
    last_snap_offset: i64,
}

impl Log {
    /// Appends producer batches as the leader: offsets assigned from the LEO, the partition
    /// leader epoch stamped, LogAppendTime applied if configured. Each batch must be whole, valid
    /// (CRC, records), not a control batch, and at most max.message.bytes.
    pub fn append_as_leader(
        &mut self,
        batches: &[u8],
        leader_epoch: i32,
        now_ms: i64,
    ) -> Result<LogAppendInfo> {
        self.append_as_leader_from(batches, leader_epoch, now_ms, AppendOrigin::Client)
    }

    /// `append_as_leader` of batches from `origin` (the coordinator appends transaction markers).
    pub fn append_as_leader_from(
        &mut self,
        batches: &[u8],
        leader_epoch: i32,
        now_ms: i64,
        origin: AppendOrigin,
    ) -> Result<LogAppendInfo> {
        self.check_open()?;
        let checked =
            LeaderBatches::check_from(batches.to_vec(), self.leader_checks(), origin, now_ms)?;
        self.append_checked_as_leader(checked, leader_epoch, now_ms)
    }

    /// The checks a `LeaderBatches` must have passed to be appended.
    pub fn leader_checks(&self) -> LeaderChecks {
        LeaderChecks {
            max_message_bytes: self.config.max_message_bytes as usize,
            key_required: self.config.compact,
            timestamp_type: self.config.message_timestamp_type,
            timestamp_before_max_ms: self.config.message_timestamp_before_max_ms,
            timestamp_after_max_ms: self.config.message_timestamp_after_max_ms,
            topic_partition: self
                .dir()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        }
    }

    /// The second half of `append_as_leader`: batches `LeaderBatches::check` accepted against
    /// this log's `leader_checks` (else INVALID_ARGUMENT: the config changed since; check
    /// again).
    pub fn append_checked_as_leader(
        &mut self,
        batches: LeaderBatches,
        leader_epoch: i32,
        now_ms: i64,
    ) -> Result<LogAppendInfo> {
        self.check_open()?;
        if batches.checks != self.leader_checks() {
            return Err(StorageError::InvalidArgument(format!(
                "batches checked as {:?}, the log's checks are {:?} now",
                batches.checks,
                self.leader_checks()
            )));
        }
        let LeaderBatches {
            mut buf,
            mut checked,
            ..
        } = batches;
        let log_append_time =
            (self.config.message_timestamp_type == TimestampType::LogAppendTime).then_some(now_ms);
        let mut next = self.log_end_offset;
        for c in &mut checked {
            let bytes = &mut buf[c.position..c.position + c.header.size_in_bytes()];
            set_base_offset(bytes, next);
            set_partition_leader_epoch(bytes, leader_epoch);
            c.header.base_offset = next;
            c.header.partition_leader_epoch = leader_epoch;
            if let Some(now) = log_append_time {
                let attributes = c.header.attributes | TIMESTAMP_TYPE_MASK;
                bytes[ATTRIBUTES_OFFSET..ATTRIBUTES_OFFSET + 2]
                    .copy_from_slice(&attributes.to_be_bytes());
                bytes[MAX_TIMESTAMP_OFFSET..MAX_TIMESTAMP_OFFSET + 8]
                    .copy_from_slice(&now.to_be_bytes());
                update_crc(bytes);
                c.header = BatchHeader::parse(bytes)?;
            }
            next = last_offset_of(&c.header) + 1;
        }
        self.append_checked(&buf, &checked, now_ms, log_append_time)
    }

    /// Appends batches fetched from the leader, offsets and epochs kept. The first must start at
    /// the LEO and each next one right after the previous (else UNEXPECTED_APPEND_OFFSET); CRCs
    /// are checked. A partial batch at the end (fetch slices may end inside one) is left out.
    pub fn append_as_follower(&mut self, batches: &[u8]) -> Result<LogAppendInfo> {
        self.check_open()?;
        let mut checked = Vec::new();
        let mut expected = self.log_end_offset;
        for item in BatchIter::new(batches) {
            let (position, header) = item?;
            header.validate(&batches[position..position + header.size_in_bytes()])?;
            if header.base_offset != expected {
                return Err(StorageError::UnexpectedAppendOffset {
                    expected,
                    found: header.base_offset,
                });
            }
            expected = last_offset_of(&header).saturating_add(1);
            checked.push(Checked { position, header });
        }
        self.append_checked(batches, &checked, now_ms(), None)
    }

    fn append_checked(
        &mut self,
        buf: &[u8],
        checked: &[Checked],
        now_ms: i64,
        log_append_time: Option<i64>,
    ) -> Result<LogAppendInfo> {
        let active = self.active();
        let mark = AppendMark {
            log_end_offset: self.log_end_offset,
            active_base: active.base_offset(),
            active: active.mark(),
            epochs: self.epochs.entries().to_vec(),
            roll_flush_upto: self.roll_flush_upto,
            last_snap_offset: self.producers.last_snap_offset(),
        };
        self.producers.manager.mark();
        let info = match self.write_batches(buf, checked, now_ms, log_append_time) {
            Ok(info) => info,
            Err(e) => {
                if let Err(undo) = self.rollback_append(mark) {
                    self.offline = Some(format!(
                        "an append failed ({e}) and could not be undone ({undo})"
                    ));
                }
                return Err(e);
            }
        };
        if self.log_end_offset - self.recovery_point >= self.config.flush_messages {
            if let Err(e) = self.flush() {
                // After a failed fsync the page cache cannot be trusted to hold what earlier
                // appends wrote either: the append is undone and the log goes offline.
                let undone = self.rollback_append(mark).err();
                self.offline = Some(match undone {
                    None => format!("a flush failed ({e})"),
                    Some(undo) => {
                        format!("a flush failed ({e}) and the append could not be undone ({undo})")
                    }
                });
                return Err(e);
            }
        }
        self.producers.manager.commit();
        Ok(info)
    }

    fn write_batches(
        &mut self,
        buf: &[u8],
        checked: &[Checked],
        now_ms: i64,
        log_append_time: Option<i64>,
    ) -> Result<LogAppendInfo> {
        let mut info = LogAppendInfo {
            first_offset: -1,
            last_offset: -1,
            max_timestamp: NO_TIMESTAMP,
            offset_of_max_timestamp: -1,
            log_append_time: log_append_time.unwrap_or(NO_TIMESTAMP),
            log_start_offset: self.log_start_offset,
            record_count: 0,
            batch_count: 0,
            valid_bytes: 0,
        };
        for c in checked {
            let h = &c.header;
            let size = h.size_in_bytes();
            let last_offset = last_offset_of(h);
            if self
                .active()
                .should_roll(&self.config, size as u32, last_offset, now_ms)
            {
                self.roll_at(h.base_offset, now_ms)?;
            }
            let bytes = &buf[c.position..c.position + size];
            let high_watermark = self.high_watermark;
            let active = self
                .segments
                .values_mut()
                .next_back()
                .expect("an open log has a segment");
            active.append(bytes, h, now_ms)?;
            self.log_end_offset = last_offset + 1;
            self.producers
                .apply_appended(active, h, bytes, high_watermark)?;
            if info.batch_count == 0 {
                info.first_offset = h.base_offset;
            }
            info.last_offset = last_offset;
            if h.max_timestamp > info.max_timestamp {
                info.max_timestamp = h.max_timestamp;
                info.offset_of_max_timestamp = last_offset;
            }
            info.record_count += h.records_count.max(0) as u32;
            info.batch_count += 1;
            info.valid_bytes += size as u32;
            let epoch = h.partition_leader_epoch;
            if epoch >= 0
                && self
                    .epochs
                    .latest_epoch()
                    .is_none_or(|latest| epoch > latest)
            {
                // Written by the next flush (leader_epoch.rs): recovery assigns it again from
                // this batch until then.
                self.epochs.assign_deferred(epoch, h.base_offset);
            }
        }
        Ok(info)
    }

    /// Undoes a failed append (see the module comment), freeing space first: the segments it
    /// rolled go, then the one active before it is cut back, then the epochs are rewritten.
    fn rollback_append(&mut self, mark: AppendMark) -> Result<()> {
        self.forget_bound_metadata();
        self.log_end_offset = mark.log_end_offset;
        self.roll_flush_upto = mark.roll_flush_upto;
        self.producers.manager.rollback();
        let rolled: Vec<i64> = self
            .segments
            .range(mark.active_base + 1..)
            .map(|(&base, _)| base)
            .collect();
        for base in rolled {
            if let Some(segment) = self.segments.remove(&base) {
                segment.delete()?;
            }
            self.producers.delete_snapshot(base)?;
        }
        self.producers.set_last_snap_offset(mark.last_snap_offset);
        self.segments
            .get_mut(&mark.active_base)
            .expect("the segment active before the append")
            .rollback(&mark.active)?;
        self.epochs.restore(mark.epochs);
        Ok(())
    }
}
