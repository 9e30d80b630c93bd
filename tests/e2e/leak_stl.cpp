/*
 * leak_stl.cpp - a small real C++ program for the leak check against
 * memcheck (tests/e2e/leak_memcheck.sh): it indexes the words of its
 * input file with the standard library's containers, prints through
 * iostream, and leaves at exit what programs commonly leave: an index
 * held by a global pointer (never deleted), an array of objects with
 * destructors (new[] with its count), objects kept through a secondary
 * base, strings of both of libstdc++'s ABIs (built twice, once with the
 * copy-on-write std::string, whose blocks are kept by pointers 24 B in),
 * and a part of the index it drops on the floor.
 *
 * Its figures are not worked out by hand (samples/leak_cxx.cpp does that
 * for each shape): the test compares them with memcheck's.
 *
 * Not for: allocation counts (accuracy tests), the bench (tests/bench).
 */
#include <deque>
#include <fstream>
#include <iostream>
#include <list>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Shape {
	virtual ~Shape() {}
	virtual double area() const = 0;
};

struct Named {
	virtual ~Named() {}
	std::string name;
};

struct Square : Shape, Named {
	double side = 0;
	double area() const override { return side * side; }
};

struct Cell {
	std::string text;
	long count = 0;
	~Cell() { count = -1; }
};

struct Index {
	std::map<std::string, std::vector<int>> where;
	std::unordered_map<std::string, long> freq;
	std::list<std::string> order;
	std::deque<int> lengths;
	std::vector<std::shared_ptr<std::string>> shared;
};

}

Index *volatile index_;
Cell *volatile cells;
Named *volatile named[8];
std::vector<std::string> *volatile dropped;

/*
 * The dropped part: a vector of strings whose only pointer goes. Built
 * in a frame of its own, then the stack below main's frame is scrubbed:
 * copying it leaves pointers into its array in stack slots and registers
 * that exit's frames may or may not overwrite, depending on which memcpy
 * the CPU gets (with glibc.cpu.x86_rep_movsb_threshold=100000000 memcheck
 * saw such a pointer at exit and called all 733 blocks possibly lost).
 * Those leftovers are the machine's, not the program's: the test compares
 * the kinds the program's own pointers give.
 */
__attribute__((noinline)) static void drop_part(const std::list<std::string> &order)
{
	dropped = new std::vector<std::string>(order.begin(), order.end());
	dropped = nullptr;
}

__attribute__((noinline)) static void scrub_stack()
{
	volatile unsigned long pad[32 * 1024];
	for (size_t i = 0; i < sizeof pad / sizeof pad[0]; i++)
		pad[i] = 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::cerr << "usage: leak_stl FILE" << std::endl;
		return 2;
	}
	std::ifstream in(argv[1]);
	index_ = new Index;
	std::string line;
	int n = 0;
	while (std::getline(in, line)) {
		std::istringstream words(line);
		std::string w;
		while (words >> w) {
			std::string key = "word:" + w + ":" + std::to_string(w.size() * 7);
			index_->where[key].push_back(n);
			index_->freq[key]++;
			if (index_->freq[key] == 1)
				index_->order.push_back(key);
			index_->lengths.push_back((int)w.size());
			if (n % 5 == 0)
				index_->shared.push_back(std::make_shared<std::string>(key + key));
			n++;
		}
	}
	cells = new Cell[16];
	for (int i = 0; i < 16; i++)
		cells[i].text = "cell number " + std::to_string(i) + " of the table";
	for (int i = 0; i < 8; i++) {
		Square *s = new Square;
		s->side = i;
		s->name = "square with a rather long name " + std::to_string(i);
		named[i] = s;
	}
	drop_part(index_->order);
	scrub_stack();
	std::cout << n << " words, " << index_->where.size() << " distinct, first "
		  << index_->order.front() << std::endl;
	return 0;
}
