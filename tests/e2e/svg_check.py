#!/usr/bin/python3
"""svg_check.py - reads what headless Chromium made of memtrail's SVG flame
graph, for report_svg.sh: the DOM it dumped after the script ran, and a PNG
screenshot. Not for: deciding what the figures should be (the shell test
works them out from samples/phases.c).

  svg_check.py frames DOM          one line per visible frame:
                                   "ID DEPTH X W V FILL MATCH RECTX RECTW LABEL"
  svg_check.py root DOM ATTR       the root <svg>'s attribute ATTR ('' if none)
  svg_check.py text DOM ID         the text of the element with that id
  svg_check.py rect DOM ID ATTR    attribute ATTR of frame ID's rect
  svg_check.py png FILE R G B      "WIDTH HEIGHT N": N pixels of colour R,G,B
  svg_check.py warm FILE           pixels of the flame palette (r >= 205,
                                   b <= 55 and g >= 70)
"""
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

NS = '{http://www.w3.org/2000/svg}'


def dom(path):
    return ET.parse(path).getroot()


def frames(root):
    for g in root.iter(NS + 'g'):
        if g.get('class') != 'f' or 'display: none' in (g.get('style') or ''):
            continue
        r = g.find(NS + 'rect')
        title = g.find(NS + 'title').text
        label = title[:title.rindex(' (')]
        print(g.get('id'), g.get('data-d'), g.get('data-x'), g.get('data-w'),
              g.get('data-v'), r.get('fill').replace(' ', ''),
              g.get('data-match') or '0', r.get('x'), r.get('width'), label)


def png_pixels(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat, w = 8, b'', 0
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b'IHDR':
            w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
            assert depth == 8 and ctype in (2, 6), 'not 8-bit RGB(A)'
            bpp = 3 if ctype == 2 else 4
        elif kind == b'IDAT':
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, [(r[i], r[i + 1], r[i + 2]) for r in rows for i in range(0, stride, bpp)]


def main(argv):
    cmd = argv[1]
    if cmd == 'frames':
        frames(dom(argv[2]))
    elif cmd == 'root':
        print(dom(argv[2]).get(argv[3]) or '')
    elif cmd == 'text':
        for e in dom(argv[2]).iter():
            if e.get('id') == argv[3]:
                print((e.text or '').strip())
    elif cmd == 'rect':
        for g in dom(argv[2]).iter(NS + 'g'):
            if g.get('id') == argv[3]:
                print(g.find(NS + 'rect').get(argv[4]))
    elif cmd == 'png':
        w, h, px = png_pixels(argv[2])
        want = tuple(int(v) for v in argv[3:6])
        print(w, h, sum(1 for p in px if p == want))
    elif cmd == 'warm':
        w, h, px = png_pixels(argv[2])
        print(sum(1 for r, g, b in px if r >= 205 and b <= 55 and g >= 70))


main(sys.argv)
