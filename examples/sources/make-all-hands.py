"""Writes all-hands.pptx: the LibreOffice-written deck of test/fixtures/convert/deck-libreoffice.pptx
(its slide layouts, placeholders and notes pages) with the handbook's own text in place of its words.
Run from the repository root: python3 examples/sources/make-all-hands.py examples/docs/all-hands.pptx"""
import sys
import zipfile

TEXT = {
    'Quarterly Harbour Review': 'Northwind Labs all-hands, Q3',
    'Port Operations': 'People team',
    'Traffic this quarter': 'The quarter',
    'Container ships up twelve percent': 'Revenue up eighteen percent',
    'Mostly on the northern route': 'Mostly from the platform subscriptions',
    'Two new carriers': 'Two new offices: Lisbon and Tallinn',
    'Ferry crossings unchanged': 'Support response time unchanged',
    'Berth usage': 'Hiring plan',
    'Berth': 'Team',
    'Ships': 'Open roles',
    'Hours': 'Hired',
    'A1': 'Platform',
    '42': '4',
    '310': '2',
    'B2': 'Support',
    '17': '3',
    '122': '1',
    'Next steps': 'Questions',
    'Extend the breakwater survey': 'Send questions to the people team by Friday noon',
    'Tender for new cranes': 'The next all-hands is on the first Monday of January',
    'Ελληνικά and café déjà vu': 'Recordings stay on the intranet for a year',
    'Remind the board that the northern route opened in July.': 'Thank the sales team for the Lisbon launch.',
    'Berth B2 was closed for dredging for two weeks.': 'Every candidate meets two future teammates before an offer.',
}

source = zipfile.ZipFile('test/fixtures/convert/deck-libreoffice.pptx')
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as out:
    for info in source.infolist():
        data = source.read(info.filename)
        if info.filename.endswith('.xml'):
            text = data.decode('utf-8')
            for old, new in TEXT.items():
                text = text.replace(f'<a:t>{old}</a:t>', f'<a:t>{new}</a:t>')
            data = text.encode('utf-8')
        out.writestr(info, data)
