/*
 * stl.cpp - benchmark workload for `make bench`: a C++ STL program that
 * allocates through operator new/delete.
 *
 *   stl ROUNDS
 *
 * Each round fills a std::map<std::string, long> and a
 * std::unordered_map<unsigned long, std::string> with keys longer than the
 * small-string buffer (so every string owns a heap block), looks keys up,
 * erases half, builds and sorts a std::vector<std::string> that grows by
 * doubling, and joins strings with +=. The input sequence comes from a fixed
 * linear congruential generator, so the printed checksum is the same on
 * every run, with or without a profiler.
 *
 * Not a test: the benchmark takes the event count from the profilers and
 * only checks that this program prints the same line under each of them.
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

unsigned long lcg_state = 12345;

unsigned long next_rand()
{
	lcg_state = lcg_state * 6364136223846793005ul + 1442695040888963407ul;
	return lcg_state >> 33;
}

std::string make_key(unsigned long v)
{
	/* 16+ characters: longer than libstdc++'s 15-byte inline buffer. */
	char buf[48];
	std::snprintf(buf, sizeof buf, "key-%012lu-%lu", v, v % 97);
	return std::string(buf);
}

unsigned long round_once(unsigned n)
{
	std::map<std::string, long> ordered;
	std::unordered_map<unsigned long, std::string> hashed;
	std::vector<std::string> words;
	unsigned long sum = 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned long v = next_rand() % (4ul * n);
		ordered[make_key(v)] += (long)i;
		hashed.emplace(v, make_key(v * 3));
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned long v = next_rand() % (4ul * n);
		auto it = ordered.find(make_key(v));
		if (it != ordered.end())
			sum += (unsigned long)it->second;
		auto h = hashed.find(v);
		if (h != hashed.end())
			sum += h->second.size();
	}
	for (auto it = ordered.begin(); it != ordered.end();) {
		if (it->second & 1)
			it = ordered.erase(it);
		else
			++it;
	}
	for (auto it = hashed.begin(); it != hashed.end();) {
		if (it->first & 1)
			it = hashed.erase(it);
		else
			++it;
	}
	for (const auto &kv : ordered)
		words.push_back(kv.first + "/" + std::to_string(kv.second));
	std::sort(words.begin(), words.end());
	std::string joined;
	for (size_t i = 0; i < words.size(); i += 7)
		joined += words[i];
	sum += ordered.size() * 3 + hashed.size() * 5 + words.size() * 7 +
	       joined.size();
	return sum;
}

} /* namespace */

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)std::strtoul(argv[1], nullptr, 10) : 10;
	unsigned long sum = 0;

	for (unsigned r = 0; r < rounds; r++)
		sum += round_once(50000);
	std::printf("stl: rounds=%u checksum=%lu\n", rounds, sum);
	return 0;
}
