//! Folding explainers of separate files into one: `roce explain DIR` reads its files in parallel, one
//! [`Explainer`] each, and folds them in file order. The result is the one reading the files one after
//! another gives (tested on the corpus): first evidence comes from the earliest file, counts add up, sets
//! keep their order of first appearance, and every cap still holds.
//!
//! The merges destructure every struct without `..`, so a field added later cannot be forgotten here.

use indexmap::{IndexMap, IndexSet};

use super::diag::DIAG_MAX;
use super::{Acc, Explainer, FATAL_MAX, FINDINGS_MAX, Facts, HOSTS_MAX, PROCESSES_MAX, Proc};

/// `a` if it is set, else `b` (the earlier file's evidence wins).
fn first<T>(a: &mut Option<T>, b: Option<T>) {
    if a.is_none() {
        *a = b;
    }
}

fn union(a: &mut IndexSet<String>, b: IndexSet<String>, cap: usize) {
    for x in b {
        if a.len() >= cap {
            break;
        }
        a.insert(x);
    }
}

fn extend<T>(a: &mut Vec<T>, b: Vec<T>, cap: usize) {
    let room = cap.saturating_sub(a.len());
    a.extend(b.into_iter().take(room));
}

impl Explainer {
    /// Fold `other` (the explainer of a later file) into this one.
    ///
    /// ```
    /// use roce_inspect::explain::Explainer;
    /// let read = |name: &str, log: &str| {
    ///     let mut x = Explainer::new();
    ///     x.start_file(name);
    ///     x.read(log.as_bytes()).unwrap();
    ///     x
    /// };
    /// let mut a = read("rank0.log", "n1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n");
    /// a.merge(read("rank1.log", "n2:2:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [receive] via NET/IB/0/GDRDMA\n"));
    /// let e = a.finish();
    /// assert_eq!((e.hosts.len(), e.connections.net_gdr), (2, 2));
    /// ```
    pub fn merge(&mut self, other: Explainer) {
        let Explainer {
            find: _,
            files,
            line_no: _,
            procs,
            index: _,
            keys,
            prefixes: _,
            prefixes_max: _,
            last: _,
            hosts,
            versions,
            env,
            devices,
            socket_ifs,
            facts,
            found,
            ucx_retry_key: _,
            tables,
            diags,
            inspector,
            ras_report,
            scratch: _,
        } = other;
        self.files.extend(files);
        self.last = None;
        self.ucx_retry_key = None;
        for (key, p) in keys.into_iter().zip(procs) {
            let i = match self.index.get(&key) {
                Some(&i) => i,
                None if key.is_empty() || self.procs.len() >= PROCESSES_MAX => self.anon(),
                None => {
                    self.procs.push(Proc::default());
                    self.keys.push(key.clone());
                    let i = self.procs.len() - 1;
                    self.index.insert(key, i);
                    i
                }
            };
            self.procs[i].merge(p);
        }
        union(&mut self.hosts, hosts, usize::MAX);
        for (v, ev) in versions {
            if self.versions.len() < 64 {
                self.versions.entry(v).or_insert(ev);
            }
        }
        for (name, values) in env {
            if self.env.len() >= 1024 && !self.env.contains_key(&name) {
                continue;
            }
            let mine = self.env.entry(name).or_default();
            for (v, ev) in values {
                if mine.len() < 16 {
                    mine.entry(v).or_insert(ev);
                }
            }
        }
        for (k, d) in devices {
            if self.devices.len() < 1024 {
                self.devices.entry(k).or_insert(d);
            }
        }
        union(&mut self.socket_ifs, socket_ifs, 64);
        self.facts.merge(facts);
        for (k, acc) in found {
            self.merge_found(k, acc);
        }
        self.tables.merge(tables);
        for (k, d) in diags {
            if let Some(mine) = self.diags.get_mut(&k) {
                mine.count += d.count;
            } else if self.diags.len() < DIAG_MAX {
                self.diags.insert(k, d);
            }
        }
        self.ras_report |= ras_report;
        for c in inspector {
            self.merge_inspector(c);
        }
    }

    fn merge_found(&mut self, k: (roce_model::Code, String), acc: Acc) {
        if let Some(mine) = self.found.get_mut(&k) {
            mine.finding.count += acc.finding.count;
            for h in acc.hosts {
                if mine.hosts.len() >= HOSTS_MAX {
                    break;
                }
                mine.hosts.insert(h);
            }
            return;
        }
        if self.found.len() >= FINDINGS_MAX {
            if let Some(a) = self
                .found
                .values_mut()
                .find(|a| a.finding.code == acc.finding.code)
            {
                a.finding.count += acc.finding.count;
            }
            return;
        }
        self.found.insert(k, acc);
    }
}

impl Proc {
    fn merge(&mut self, o: Proc) {
        let Proc {
            host,
            pid,
            rank,
            nranks,
            cuda_dev,
            version,
            networks,
            network_ev,
            connections,
            channel_nets,
            net_channel_ev,
            nongdr_channel_ev,
            rdma_ports,
            lines,
        } = o;
        if self.host.is_empty() && self.pid.is_empty() {
            self.host = host;
            self.pid = pid;
        }
        // the rank in the largest communicator, as reading them in order would keep
        if nranks >= self.nranks || self.rank.is_none() {
            if rank.is_some() {
                self.rank = rank;
            }
            if nranks.is_some() {
                self.nranks = nranks;
            }
        }
        first(&mut self.cuda_dev, cuda_dev);
        if version.is_some() {
            self.version = version;
        }
        for n in networks {
            if !self.networks.contains(&n) {
                self.networks.push(n);
            }
        }
        first(&mut self.network_ev, network_ev);
        self.connections.add(&connections);
        for n in channel_nets {
            if !self.channel_nets.contains(&n) && self.channel_nets.len() < 8 {
                self.channel_nets.push(n);
            }
        }
        first(&mut self.net_channel_ev, net_channel_ev);
        first(&mut self.nongdr_channel_ev, nongdr_channel_ev);
        self.rdma_ports = self.rdma_ports.max(rdma_ports);
        self.lines += lines;
    }
}

impl Facts {
    fn merge(&mut self, o: Facts) {
        let Facts {
            ib_probed,
            ib_no_device,
            ib_no_device_count,
            ib_init_failed,
            ib_using_empty,
            socket_using,
            using_socket,
            ib_open_failed,
            gdr_hca,
            gdr_pair_enabled,
            gdr_pair_distance,
            gdr_rings,
            no_interface,
            net_not_found,
            plugin_failures,
            plugins_loaded,
            external_plugin,
            ucx_roce,
            ucx_ib,
            info_lines,
            warn_lines,
            warn_text_lines,
            ib_active,
            link,
            ib_chain,
            ib_using,
            mixed_link_warn,
            tcp_plugin,
            ofi,
            ofi_provider,
            ucx_rdma,
            ucx_tcp,
            ucx_asked_rdma,
            ofi_gdr_unsupported,
            ofi_gdr_required,
            nixl_engine_error,
            perftest,
            ibverbs_missing,
            n_nodes,
            local_ranks,
            speeds,
            socket_addrs,
            bootstrap_ifs,
            net_socket_ifs,
            oob_if,
            fatal,
            first_warn,
            chain_origin,
            traceback,
            torch_version,
            torch_pending: _,
        } = o;
        self.ib_probed |= ib_probed;
        first(&mut self.ib_no_device, ib_no_device);
        self.ib_no_device_count += ib_no_device_count;
        first(&mut self.ib_init_failed, ib_init_failed);
        first(&mut self.ib_using_empty, ib_using_empty);
        first(&mut self.socket_using, socket_using);
        first(&mut self.using_socket, using_socket);
        first(&mut self.ib_open_failed, ib_open_failed);
        merge_map(&mut self.gdr_hca, gdr_hca, 1024);
        first(&mut self.gdr_pair_enabled, gdr_pair_enabled);
        first(&mut self.gdr_pair_distance, gdr_pair_distance);
        first(&mut self.gdr_rings, gdr_rings);
        first(&mut self.no_interface, no_interface);
        first(&mut self.net_not_found, net_not_found);
        extend(&mut self.plugin_failures, plugin_failures, 8);
        union(&mut self.plugins_loaded, plugins_loaded, usize::MAX);
        first(&mut self.external_plugin, external_plugin);
        self.ucx_roce |= ucx_roce;
        self.ucx_ib |= ucx_ib;
        self.info_lines += info_lines;
        self.warn_lines += warn_lines;
        self.warn_text_lines += warn_text_lines;
        first(&mut self.ib_active, ib_active);
        self.link.roce |= link.roce;
        self.link.ib |= link.ib;
        first(&mut self.ib_chain, ib_chain);
        first(&mut self.ib_using, ib_using);
        first(&mut self.mixed_link_warn, mixed_link_warn);
        first(&mut self.tcp_plugin, tcp_plugin);
        first(&mut self.ofi, ofi);
        first(&mut self.ofi_provider, ofi_provider);
        self.ucx_rdma |= ucx_rdma;
        self.ucx_tcp |= ucx_tcp;
        self.ucx_asked_rdma |= ucx_asked_rdma;
        first(&mut self.ofi_gdr_unsupported, ofi_gdr_unsupported);
        first(&mut self.ofi_gdr_required, ofi_gdr_required);
        first(&mut self.nixl_engine_error, nixl_engine_error);
        self.perftest.merge(perftest);
        first(&mut self.ibverbs_missing, ibverbs_missing);
        self.n_nodes = self.n_nodes.max(n_nodes);
        self.local_ranks = self.local_ranks.max(local_ranks);
        for (name, mbps) in speeds {
            if self.speeds.len() < 1024 {
                self.speeds.entry(name).or_insert(mbps);
            }
        }
        union(&mut self.socket_addrs, socket_addrs, 64);
        first(&mut self.bootstrap_ifs, bootstrap_ifs);
        first(&mut self.net_socket_ifs, net_socket_ifs);
        first(&mut self.oob_if, oob_if);
        extend(&mut self.fatal, fatal, FATAL_MAX);
        first(&mut self.first_warn, first_warn);
        first(&mut self.chain_origin, chain_origin);
        first(&mut self.traceback, traceback);
        first(&mut self.torch_version, torch_version);
    }
}

fn merge_map<V>(a: &mut IndexMap<String, V>, b: IndexMap<String, V>, cap: usize) {
    for (k, v) in b {
        if a.len() < cap && !a.contains_key(&k) {
            a.insert(k, v);
        }
    }
}
