#!/usr/bin/env node
// kafkajs 2.2.4 (the Node.js client) against a kafkamock broker: one scenario per process, driven by a JSON spec.
//
//     node scenarios.js SCENARIO BOOTSTRAP -        (the spec, JSON, on standard input)
//
// Prints one JSON line on stdout: the scenario's result, or {"error": {...}} (and what it had so far) with exit
// code 1. kafkajs comes from NODE_PATH (.cache/node/node_modules, installed by `make js`); its log goes to stderr
// as JSON lines. tests/support/js_clients.py runs this and parses the line.
//
// Every spec may carry
//   client:   {clientId, ssl: true | {ca, cert, key: PEM file paths}, sasl: {mechanism, username, password},
//              connectionTimeout, requestTimeout, retry: {...}}        (kafkajs' Kafka() options)
//   logLevel: "ERROR" (default) | "WARN" | "INFO" | "DEBUG"
//   timeoutMs: the whole scenario's deadline (default 30000)
//
// Scenarios
//   admin     {ops: [{op, ...}]}: createTopics, deleteTopics, createPartitions, listTopics, fetchTopicMetadata,
//             fetchTopicOffsets, describeCluster, describeConfigs, alterConfigs, describeGroups, listGroups,
//             fetchOffsets.
//             -> {results: [{op, result} | {op, error}]} (a failed op does not stop the run)
//   produce   {topic, messages | sends: [[message...]...], compression: "none"|"gzip", acks, idempotent}
//             message: {key, value, headers: {name: value}, partition, timestamp}; -> {sends: [RecordMetadata[]]}
//   consume   {topics, groupId, count, untilValue, fromBeginning, readUncommitted, autoCommit, consumer: {...}}
//             a group member reading until `count` records (or one whose value is `untilValue`); -> {records, joins}
//   roundtrip {produce: <produce spec>, consume: <consume spec>}: both in one process; -> {produce, consume}
//   txn       {transactionalId, steps: [{op: begin|send|sendOffsets|commit|abort, ...}]}
//             one transactional producer; -> {steps: [{op, ok, result | error}]} (a failed step ends the run)
//   group     {topic, groupId, initial, produceWhileShared, produceAfter}: two members share the topic (a
//             rebalance), commit, leave; a third resumes from the committed offsets. -> see runGroup
//   lso       {topic, transactionalId, groupPrefix, before, open, after, fetchesAfter}: read_committed and
//             read_uncommitted consumers around an open transaction. -> see runLso
'use strict'

const fs = require('fs')
const { Kafka, CompressionTypes, ConfigResourceTypes, logLevel: LEVELS } = require('kafkajs')

const COMPRESSION = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP }
const RESOURCE_TYPES = { TOPIC: ConfigResourceTypes.TOPIC, BROKER: ConfigResourceTypes.BROKER }
const RESOURCE_NAMES = Object.fromEntries(Object.entries(RESOURCE_TYPES).map(([k, v]) => [v, k]))

// -- helpers ------------------------------------------------------------------------------------------------------

function readStdin () {
  return new Promise((resolve, reject) => {
    const chunks = []
    process.stdin.on('data', c => chunks.push(c))
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    process.stdin.on('error', reject)
  })
}

function describeError (e) {
  if (e == null) return null
  if (!(e instanceof Error)) return { name: typeof e, message: String(e) }
  const out = { name: e.name, message: e.message }
  for (const key of ['type', 'code', 'retriable', 'broker', 'groupId', 'topic', 'partition']) {
    if (e[key] !== undefined) out[key] = e[key]
  }
  const inner = e.originalError || e.cause
  if (inner && inner !== e) out.cause = describeError(inner)
  return out
}

function stderrLogger () {
  return ({ namespace, label, log }) => {
    const { message, timestamp, logger, ...extra } = log
    process.stderr.write(JSON.stringify({ level: label, namespace, message, ...extra }) + '\n')
  }
}

function makeKafka (bootstrap, spec) {
  const client = { ...(spec.client || {}) }
  if (client.ssl && typeof client.ssl === 'object') {   // PEM file paths -> their contents
    const ssl = { ...client.ssl }
    if (ssl.ca) ssl.ca = [fs.readFileSync(ssl.ca, 'utf8')]
    for (const key of ['cert', 'key']) if (ssl[key]) ssl[key] = fs.readFileSync(ssl[key], 'utf8')
    client.ssl = ssl
  }
  return new Kafka({
    clientId: 'kafkajs-scenarios',
    brokers: bootstrap.split(','),
    connectionTimeout: 5000,
    requestTimeout: 10000,
    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 },
    logLevel: LEVELS[spec.logLevel || 'ERROR'],
    logCreator: stderrLogger,
    ...client,
  })
}

function text (value) {
  return value == null ? null : value.toString('utf8')
}

function headerPairs (headers) {
  const pairs = []
  for (const [name, value] of Object.entries(headers || {})) {
    for (const v of Array.isArray(value) ? value : [value]) pairs.push([name, text(v)])
  }
  return pairs
}

function outgoing (message) {
  const out = { key: message.key ?? null, value: message.value ?? null }
  if (message.headers) out.headers = message.headers
  if (message.partition != null) out.partition = message.partition
  if (message.timestamp != null) out.timestamp = String(message.timestamp)
  return out
}

function byTopic (messages, topic) {
  const groups = new Map()
  for (const m of messages) {
    const t = m.topic || topic
    if (!groups.has(t)) groups.set(t, [])
    groups.get(t).push(outgoing(m))
  }
  return [...groups].map(([t, ms]) => ({ topic: t, messages: ms }))
}

// Waits on a condition, re-checked whenever `changed()` is called (and at least every 200 ms), with a deadline.
class Signal {
  constructor () { this.waiters = [] }
  changed () { for (const w of this.waiters.splice(0)) w() }
  async until (condition, timeoutMs, what) {
    const deadline = Date.now() + timeoutMs
    while (!condition()) {
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
      await new Promise(resolve => {
        const timer = setTimeout(resolve, Math.min(left, 200))
        this.waiters.push(() => { clearTimeout(timer); resolve() })
      })
    }
  }
}

// A group member collecting what it reads; `joins` are its GROUP_JOIN events (assignment per generation).
class Member {
  constructor (kafka, name, spec, signal) {
    this.name = name
    this.records = []
    this.joins = []
    this.fetches = 0
    this.signal = signal
    this.consumer = kafka.consumer({
      groupId: spec.groupId,
      sessionTimeout: 10000,
      rebalanceTimeout: 10000,
      heartbeatInterval: 300,
      maxWaitTimeInMs: 300,
      readUncommitted: Boolean(spec.readUncommitted),
      retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 },
      ...(spec.consumer || {}),
    })
    const { GROUP_JOIN, FETCH, CRASH } = this.consumer.events
    this.consumer.on(GROUP_JOIN, e => {
      this.joins.push({ memberId: e.payload.memberId, isLeader: e.payload.isLeader,
                        assignment: e.payload.memberAssignment, protocol: e.payload.groupProtocol })
      signal.changed()
    })
    this.consumer.on(FETCH, () => { this.fetches += 1; signal.changed() })
    this.consumer.on(CRASH, e => { this.crash = describeError(e.payload.error); signal.changed() })
  }

  async start (topics, fromBeginning, autoCommit = true) {
    await this.consumer.connect()
    for (const topic of topics) await this.consumer.subscribe({ topic, fromBeginning })
    await this.consumer.run({
      autoCommit,
      eachMessage: async ({ topic, partition, message }) => {
        this.records.push({
          member: this.name, topic, partition, offset: Number(message.offset), key: text(message.key),
          value: text(message.value), headers: headerPairs(message.headers), timestamp: Number(message.timestamp),
        })
        this.signal.changed()
      },
    })
  }

  assignment () {
    const last = this.joins[this.joins.length - 1]
    return last ? last.assignment : {}
  }

  report () {
    return { records: this.records, joins: this.joins, fetches: this.fetches, crash: this.crash || null }
  }
}

function values (records) {
  return records.map(r => r.value)
}

// -- scenarios ----------------------------------------------------------------------------------------------------

async function adminOp (admin, op) {
  switch (op.op) {
    case 'createTopics':
      return admin.createTopics({ topics: op.topics, validateOnly: op.validateOnly || false,
                                  waitForLeaders: op.waitForLeaders ?? !op.validateOnly, timeout: op.timeout || 5000 })
    case 'deleteTopics':
      await admin.deleteTopics({ topics: op.topics, timeout: op.timeout || 5000 })
      return true
    case 'createPartitions':
      return admin.createPartitions({ topicPartitions: op.topicPartitions })
    case 'listTopics':
      return (await admin.listTopics()).sort()
    case 'fetchTopicMetadata': {
      const { topics } = await admin.fetchTopicMetadata(op.topics ? { topics: op.topics } : undefined)
      return topics.map(t => ({ name: t.name, partitions: t.partitions.map(p => ({
        partition: p.partitionId, leader: p.leader, replicas: p.replicas, isr: p.isr, errorCode: p.partitionErrorCode,
      })).sort((a, b) => a.partition - b.partition) }))
    }
    case 'fetchTopicOffsets':
      return (await admin.fetchTopicOffsets(op.topic)).map(p => ({
        partition: p.partition, offset: Number(p.offset), high: Number(p.high), low: Number(p.low),
      })).sort((a, b) => a.partition - b.partition)
    case 'describeCluster':
      return admin.describeCluster()
    case 'describeConfigs': {
      const { resources } = await admin.describeConfigs({
        includeSynonyms: Boolean(op.includeSynonyms),
        resources: op.resources.map(r => ({ type: RESOURCE_TYPES[r.type], name: r.name, configNames: r.configNames })),
      })
      return resources.map(r => ({
        type: RESOURCE_NAMES[r.resourceType], name: r.resourceName, errorCode: r.errorCode,
        errorMessage: r.errorMessage,
        configs: Object.fromEntries(r.configEntries.map(c => [c.configName, {
          value: c.configValue, readOnly: c.readOnly, isDefault: c.isDefault, source: c.configSource,
          sensitive: c.isSensitive,
          synonyms: (c.configSynonyms || []).map(s => ({ name: s.configName, value: s.configValue,
                                                         source: s.configSource })),
        }])),
      }))
    }
    case 'alterConfigs': {
      const { resources } = await admin.alterConfigs({
        validateOnly: Boolean(op.validateOnly),
        resources: op.resources.map(r => ({ type: RESOURCE_TYPES[r.type], name: r.name,
                                            configEntries: Object.entries(r.configs).map(([name, value]) => ({
                                              name, value: String(value) })) })),
      })
      return resources.map(r => ({ type: RESOURCE_NAMES[r.resourceType], name: r.resourceName,
                                   errorCode: r.errorCode, errorMessage: r.errorMessage }))
    }
    case 'describeGroups': {
      const { groups } = await admin.describeGroups(op.groupIds)
      return groups.map(g => ({ groupId: g.groupId, state: g.state, protocol: g.protocol,
                                protocolType: g.protocolType, errorCode: g.errorCode,
                                members: g.members.map(m => ({ memberId: m.memberId, clientId: m.clientId })) }))
    }
    case 'listGroups':
      return (await admin.listGroups()).groups
    case 'fetchOffsets':
      return (await admin.fetchOffsets({ groupId: op.groupId, topics: op.topics })).map(t => ({
        topic: t.topic,
        partitions: t.partitions.map(p => ({ partition: p.partition, offset: Number(p.offset) }))
          .sort((a, b) => a.partition - b.partition),
      }))
    default:
      throw new Error(`unknown admin op ${op.op}`)
  }
}

async function runAdmin (kafka, spec, out) {
  const admin = kafka.admin()
  await admin.connect()
  out.results = []
  try {
    for (const op of spec.ops) {
      try {
        out.results.push({ op: op.op, result: await adminOp(admin, op) })
      } catch (e) {
        out.results.push({ op: op.op, error: describeError(e) })
      }
    }
  } finally {
    await admin.disconnect()
  }
}

async function runProduce (kafka, spec, out) {
  const producer = kafka.producer({ idempotent: spec.idempotent !== false, allowAutoTopicCreation: false,
                                    maxInFlightRequests: spec.idempotent !== false ? 1 : undefined,
                                    retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 } })
  await producer.connect()
  out.sends = []
  try {
    for (const messages of spec.sends || [spec.messages]) {
      const metadata = await producer.sendBatch({
        topicMessages: byTopic(messages, spec.topic),
        acks: spec.acks ?? -1,
        compression: COMPRESSION[spec.compression || 'none'],
      })
      out.sends.push(metadata.map(m => ({ topic: m.topicName, partition: m.partition, errorCode: m.errorCode,
                                          baseOffset: Number(m.baseOffset) })))
    }
  } finally {
    await producer.disconnect()
  }
}

async function runConsume (kafka, spec, out) {
  const signal = new Signal()
  const member = new Member(kafka, 'consumer', spec, signal)
  const done = () => member.records.length >= (spec.count ?? Infinity) ||
    (spec.untilValue != null && member.records.some(r => r.value === spec.untilValue)) || member.crash
  try {
    await member.start(spec.topics, spec.fromBeginning !== false, spec.autoCommit !== false)
    await signal.until(done, spec.waitMs || 20000, `${spec.count ?? spec.untilValue} records`)
  } finally {
    await member.consumer.disconnect()
    Object.assign(out, member.report())
  }
  if (member.crash) throw new Error(`the consumer crashed: ${member.crash.message}`)
}

async function runRoundtrip (kafka, spec, out) {
  out.produce = {}
  await runProduce(kafka, spec.produce, out.produce)
  out.consume = {}
  await runConsume(kafka, spec.consume, out.consume)
}

async function runTxn (kafka, spec, out) {
  const producer = kafka.producer({ transactionalId: spec.transactionalId, idempotent: true, maxInFlightRequests: 1,
                                    transactionTimeout: spec.transactionTimeout || 30000,
                                    allowAutoTopicCreation: false })
  await producer.connect()
  out.steps = []
  let txn = null
  try {
    for (const step of spec.steps) {
      const report = { op: step.op }
      out.steps.push(report)
      if (step.op === 'begin') {
        txn = await producer.transaction()
      } else if (step.op === 'send') {
        const metadata = await txn.sendBatch({ topicMessages: byTopic(step.messages, step.topic), acks: -1,
                                               compression: COMPRESSION[step.compression || 'none'] })
        report.result = metadata.map(m => ({ partition: m.partition, baseOffset: Number(m.baseOffset) }))
      } else if (step.op === 'sendOffsets') {
        await txn.sendOffsets({ consumerGroupId: step.consumerGroupId, topics: step.topics.map(t => ({
          topic: t.topic, partitions: t.partitions.map(p => ({ partition: p.partition, offset: String(p.offset) })),
        })) })
      } else if (step.op === 'commit') {
        await txn.commit()
      } else if (step.op === 'abort') {
        await txn.abort()
      } else {
        throw new Error(`unknown txn op ${step.op}`)
      }
      report.ok = true
    }
  } catch (e) {
    out.steps[out.steps.length - 1].ok = false
    throw e
  } finally {
    await producer.disconnect()
  }
}

// Two members share a topic: A alone reads what is there, B joins (a rebalance splits the partitions), both read
// `produceWhileShared` more records and commit them as they go; both leave. Then `produceAfter` records, and a third
// member C of the same group reads exactly those: it resumed from the committed offsets.
async function runGroup (kafka, spec, out) {
  const signal = new Signal()
  const timeout = spec.stepMs || 15000
  const admin = kafka.admin()
  await admin.connect()
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false })
  await producer.connect()
  const members = []
  const member = name => { const m = new Member(kafka, name, spec, signal); members.push(m); return m }
  const send = async values => producer.send({ topic: spec.topic, acks: -1,
                                                messages: values.map(v => ({ key: v, value: v })) })
  const partitions = (await admin.fetchTopicMetadata({ topics: [spec.topic] })).topics[0].partitions.length
  const owned = m => (m.assignment()[spec.topic] || []).slice().sort((x, y) => x - y)
  const read = () => new Set(members.flatMap(m => values(m.records)))
  try {
    const a = member('A')
    await a.start([spec.topic], true)
    await signal.until(() => owned(a).length === partitions && read().size >= spec.initial,
                       timeout, `A alone owning all ${partitions} partitions and reading ${spec.initial} records`)
    out.aloneAssignment = owned(a)

    const b = member('B')
    await b.start([spec.topic], true)
    const split = () => {
      const [x, y] = [owned(a), owned(b)]
      return x.length > 0 && y.length > 0 && x.length + y.length === partitions && x.every(p => !y.includes(p)) &&
        a.joins.length >= 2
    }
    await signal.until(split, timeout, 'A and B splitting the partitions')
    out.sharedAssignment = { A: owned(a), B: owned(b) }

    const shared = spec.produceWhileShared
    await send(shared)
    await signal.until(() => shared.every(v => read().has(v)), timeout, 'A and B reading the shared records')
    for (const m of [a, b]) await m.consumer.disconnect()   // commits what it read, then leaves

    out.committed = (await admin.fetchOffsets({ groupId: spec.groupId, topics: [spec.topic] }))[0].partitions
      .map(p => ({ partition: p.partition, offset: Number(p.offset) })).sort((x, y) => x.partition - y.partition)

    await send(spec.produceAfter)
    const c = member('C')
    await c.start([spec.topic], true)
    await signal.until(() => spec.produceAfter.every(v => values(c.records).includes(v)), timeout,
                       'C reading the records produced after A and B left')
    await c.consumer.disconnect()
    out.groups = await adminOp(admin, { op: 'describeGroups', groupIds: [spec.groupId] })
  } finally {
    for (const m of members) {
      await m.consumer.disconnect().catch(() => {})
    }
    out.members = Object.fromEntries(members.map(m => [m.name, m.report()]))
    await producer.disconnect()
    await admin.disconnect()
  }
}

// The last stable offset: `before` committed plainly, a transaction left open with `open` records, then `after`
// plainly (above the open transaction). A read_uncommitted member reads all of it; a read_committed one reads
// `before` only, and still nothing more after `fetchesAfter` further fetches; the commit releases the rest to it.
async function runLso (kafka, spec, out) {
  const signal = new Signal()
  const timeout = spec.stepMs || 15000
  const plain = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false })
  const transactional = kafka.producer({ transactionalId: spec.transactionalId, idempotent: true,
                                         maxInFlightRequests: 1, allowAutoTopicCreation: false })
  await plain.connect()
  await transactional.connect()
  const send = (producer, values) => producer.send({ topic: spec.topic, acks: -1,
                                                     messages: values.map(v => ({ value: v })) })
  const committed = new Member(kafka, 'read_committed', { groupId: `${spec.groupPrefix}-rc` }, signal)
  const uncommitted = new Member(kafka, 'read_uncommitted',
                                 { groupId: `${spec.groupPrefix}-ru`, readUncommitted: true }, signal)
  try {
    await send(plain, spec.before)
    const txn = await transactional.transaction()
    await send(txn, spec.open)
    await send(plain, spec.after)
    await uncommitted.start([spec.topic], true)
    await committed.start([spec.topic], true)
    const all = [...spec.before, ...spec.open, ...spec.after]
    await signal.until(() => values(uncommitted.records).length >= all.length, timeout,
                       'read_uncommitted reading every record')
    await signal.until(() => committed.records.length >= spec.before.length, timeout,
                       'read_committed reading the records below the open transaction')
    const mark = committed.fetches
    await signal.until(() => committed.fetches >= mark + spec.fetchesAfter || committed.records.length >
                       spec.before.length, timeout, `${spec.fetchesAfter} more read_committed fetches`)
    out.whileOpen = values(committed.records)
    await txn.commit()
    await signal.until(() => committed.records.length >= all.length, timeout,
                       'read_committed reading everything after the commit')
  } finally {
    for (const m of [committed, uncommitted]) await m.consumer.disconnect().catch(() => {})
    out.committed = committed.report()
    out.uncommitted = uncommitted.report()
    await transactional.disconnect()
    await plain.disconnect()
  }
}

const SCENARIOS = { admin: runAdmin, produce: runProduce, consume: runConsume, roundtrip: runRoundtrip,
                    txn: runTxn, group: runGroup, lso: runLso }

async function main () {
  const [scenario, bootstrap, source] = process.argv.slice(2)
  const run = SCENARIOS[scenario]
  if (!run || !bootstrap) {
    process.stderr.write(`usage: scenarios.js {${Object.keys(SCENARIOS).join('|')}} BOOTSTRAP [-|SPEC.json]\n`)
    process.exit(2)
  }
  const spec = JSON.parse(source && source !== '-' ? fs.readFileSync(source, 'utf8') : await readStdin())
  const out = {}
  const timeoutMs = spec.timeoutMs || 30000
  let timer
  const deadline = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`scenario ${scenario} did not finish in ${timeoutMs} ms`)), timeoutMs)
  })
  let code = 0
  try {
    await Promise.race([run(makeKafka(bootstrap, spec), spec, out), deadline])
  } catch (e) {
    out.error = describeError(e)
    code = 1
  } finally {
    clearTimeout(timer)
  }
  process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(code))
}

main()
